package chspans

// Prepare is prepare for the benchmarks: the insert built, not sent.
var Prepare = prepare
