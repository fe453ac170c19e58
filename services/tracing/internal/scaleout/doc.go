// Package scaleout holds the tests of tracing on clustered infrastructure:
// the real tracing and writer binaries on a three-node
// JetStream cluster of real nats-server processes. It has no code of its own.
package scaleout
