// Package sdkcompat holds the end-to-end tests that run the tracing SDKs our
// users already have (real npm packages, pinned in testdata/<sdk>/
// package-lock.json) against the whole platform and the local model server,
// then read the stored traces back through the public API: span types,
// inputs, outputs, tokens counted once and costs. It has no code of its own.
package sdkcompat
