// Package sdkflows holds only tests: they replay, call by call, what the
// compatible platform's Python SDK sends (its project lookup, its legacy
// and current configuration fetches, its local evaluation loops of SDK
// 0.103+ and of 0.102 and earlier) through the gateway of a whole running
// platform (pkg/testutil/platformtest), with the SDK's exact methods,
// paths, bodies (explicit nulls included) and both of its Authorization
// forms, and read back what the SDK reads.
package sdkflows
