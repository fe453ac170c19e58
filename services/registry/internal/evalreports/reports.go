package evalreports

import (
	"github.com/assayhq/assay/services/registry/internal/evaluations"
)

// Reports is the comparison and the exports over the evaluation records.
type Reports struct {
	svc   *evaluations.Service
	store evaluations.Store // svc's store: the reports page through it
}

// New returns the reports over the records of svc.
func New(svc *evaluations.Service) *Reports {
	return &Reports{svc: svc, store: svc.Store()}
}
