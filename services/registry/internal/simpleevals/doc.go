// Package simpleevals is the simple surface over the evaluation records
// (package evaluations): simple evaluations and simple queues, the
// pinning of their testsets, applications and evaluators to revisions,
// the cost estimate of a simple evaluation, and the live ticker that
// hands live runs their next window. A simple evaluation is a run whose
// steps and mappings this package derives; the records' rules (closed
// runs, flags, default queues) stay with package evaluations.
package simpleevals
