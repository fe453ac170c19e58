// Package evalreports reads evaluation runs back as reports: the
// comparison of runs over one testset revision with its statistics
// (paired and Welch estimates, Holm's correction, power) and the CSV and
// JSON exports of a run. It reads the records of package evaluations
// through their store and writes none.
package evalreports
