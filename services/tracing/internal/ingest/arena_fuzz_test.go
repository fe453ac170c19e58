package ingest_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/protobuf/proto"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
)

// arenaOutcome is what a request's spans become: each encoded span (or its
// error) and the spans rejected by the normaliser.
type arenaOutcome struct {
	spans    []*spanspb.Span
	errs     []string
	rejected []spanmodel.Error
}

// arenaRaws decodes body as ingest does for kind (0 OTLP protobuf, 1 OTLP
// JSON, 2 native JSON); nil when it is refused. Every call decodes anew:
// the normaliser may cut the raws it is given. Empty span names are named,
// as the normaliser names them at random.
func arenaRaws(body []byte, kind uint8) []spanmodel.Raw {
	var raws []spanmodel.Raw
	switch kind % 3 {
	case 0:
		r, err := ingest.DecodeOTLPProto(body)
		if err != nil {
			return nil
		}
		raws = r
	case 1:
		td, err := ingest.DecodeOTLP(body, true)
		if err != nil {
			return nil
		}
		raws = ingest.RawSpans(td)
	default:
		m, err := ingest.DecodeJSON(body)
		if err != nil {
			return nil
		}
		if raws, _, err = ingest.NativeSpans(m); err != nil {
			return nil
		}
	}
	for i := range raws {
		if raws[i].Name == "" {
			raws[i].Name = "unnamed"
		}
	}
	return raws
}

func arenaRun(n *spanmodel.Normalizer, raws []spanmodel.Raw, a *spanmodel.Arena) arenaOutcome {
	var out arenaOutcome
	spans, rejected := n.BatchIn(raws, a)
	out.rejected = rejected
	created := time.Unix(1714979289, 0)
	for _, sp := range spans {
		p, _, err := chspans.Encode(sp, n.LimitsInForce(), created, "")
		out.spans = append(out.spans, p)
		out.errs = append(out.errs, fmt.Sprint(err))
	}
	return out
}

// FuzzArena: normalising with the maps an arena lends (ingest's path, the
// maps emptied by earlier requests and lent again) stores exactly what
// normalising with new maps stores, on any body, under the default limits
// and under tight ones (trims, FitAttributes, rejections).
func FuzzArena(f *testing.F) {
	for _, td := range otlpSeeds() {
		req := ptraceotlp.NewExportRequestFromTraces(td)
		pb, err := req.MarshalProto()
		if err != nil {
			f.Fatal(err)
		}
		js, err := req.MarshalJSON()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(pb, uint8(0))
		f.Add(js, uint8(1))
	}
	for _, s := range nativeSeeds() {
		f.Add([]byte(s), uint8(2))
	}
	now := func() time.Time { return time.Unix(1714979290, 0) }
	norms := []*spanmodel.Normalizer{
		{Now: now},
		{Now: now, Limits: spanmodel.Limits{MaxAttributes: 64, MaxValueLength: 256, MaxKeyLength: 128, MaxDepth: 8,
			MaxEvents: 1, MaxLinks: 1, MaxBytes: 64 << 10}},
	}
	// Arenas with emptied maps to lend from the first input on.
	for _, td := range otlpSeeds() {
		raws := ingest.RawSpans(td)
		for _, n := range norms {
			a := spanmodel.NewArena()
			arenaRun(n, raws, a)
			a.Release()
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, kind uint8) {
		for _, n := range norms {
			raws := arenaRaws(body, kind)
			if raws == nil {
				return
			}
			want := arenaRun(n, raws, nil)
			for round := range 2 {
				a := spanmodel.NewArena()
				got := arenaRun(n, arenaRaws(body, kind), a)
				requireSameOutcome(t, round, want, got)
				a.Release()
			}
		}
	})
}

func requireSameOutcome(t *testing.T, round int, want, got arenaOutcome) {
	t.Helper()
	if !reflect.DeepEqual(want.rejected, got.rejected) {
		t.Fatalf("round %d: rejected %v with new maps, %v with the arena's", round, want.rejected, got.rejected)
	}
	if !reflect.DeepEqual(want.errs, got.errs) {
		t.Fatalf("round %d: encode errors %q with new maps, %q with the arena's", round, want.errs, got.errs)
	}
	for i := range want.spans {
		if !proto.Equal(want.spans[i], got.spans[i]) {
			t.Fatalf("round %d: span %d differs:\nnew maps: %v\narena:    %v", round, i, want.spans[i], got.spans[i])
		}
	}
}
