// Command loadgen drives the tracing pipeline for scripts/bench/load.sh:
// OTLP/HTTP protobuf requests of LLM application traces (traces.go; or
// one repeated ~1 KB span, -corpus fixed) at a target rate, measuring
// ingest latency, freshness (accepted → visible in a query) and end-to-end
// throughput, and the raw ClickHouse insert rate of the same rows as the
// ceiling.
package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/google/uuid"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	gproto "google.golang.org/protobuf/proto"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:18083", "tracing API base URL")
	token := flag.String("token", "bench-token", "the gateway's token to tracing (TRACING_TOKEN_FROM_GATEWAY)")
	chURL := flag.String("clickhouse", "clickhouse://default@127.0.0.1:59000/bench", "ClickHouse URL (for counting and the raw insert ceiling)")
	rate := flag.Int("rate", 0, "target spans/s (0: as fast as possible)")
	dur := flag.Duration("duration", 20*time.Second, "how long to send")
	batch := flag.Int("batch", 500, "spans per request")
	workers := flag.Int("workers", 4, "concurrent senders")
	raw := flag.Int("raw", 0, "also measure raw ClickHouse inserts of this many rows (-raw-batch per insert); with -duration 0, only that")
	rawBatch := flag.Int("raw-batch", 50000, "rows per raw insert")
	migrate := flag.Bool("migrate", false, "apply the span schema to the -clickhouse database first (a fresh server: scripts/bench/chcpu.sh)")
	queries := flag.String("queries", "", "instead of a load: time trace-by-id and one-day span queries through the API for this project (filled by scripts/bench/query.sh)")
	repeat := flag.Int("repeat", 50, "queries of each kind with -queries")
	traces := flag.Int("traces", 1000000, "traces stored, with -queries")
	label := flag.String("label", "run", "name of this run in the last line (\"summary <label> key=value ...\"), which scripts/bench/load.sh tabulates")
	flag.Parse()
	switch *corpusName {
	case "fixed":
	case "realistic":
		if *queries != "" {
			break // no spans sent
		}
		t0 := time.Now()
		p := realistic()
		fmt.Fprintf(os.Stderr, "corpus: realistic, seed %d, %d traces, %d spans of %d bytes on average (OTLP), built in %.1fs\n",
			*corpusSeed, len(p.traces), len(p.spans), p.bytes/len(p.spans), time.Since(t0).Seconds())
	default:
		log.Fatalf("-corpus %q: want realistic or fixed", *corpusName)
	}
	if *overload {
		overloadRun(*url, *token, *chURL, *rate, *workers, *batch, *dur)
		return
	}
	if *pgURL != "" {
		pgPath(*pgURL, *dur, *batch, *pgWriters, *pgGroup)
		return
	}
	if *queries != "" {
		timeQueries(*url, *token, *queries, *repeat, *traces)
		return
	}

	project := uuid.New()
	ctx := context.Background()
	opts, err := clickhouse.ParseDSN(*chURL)
	if err != nil {
		log.Fatal(err)
	}
	ch, err := clickhouse.Open(opts)
	if err != nil {
		log.Fatal(err)
	}
	if *migrate {
		if err := chspans.Migrate(ctx, chx.Config{URL: *chURL, DialTimeout: 5 * time.Second}, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
			log.Fatal(err)
		}
	}
	if *raw > 0 && *dur == 0 {
		rawInsert(ctx, ch, *raw, *rawBatch)
		return
	}

	var sent, accepted, rejected atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	var fresh, freshAt []time.Duration // freshness of each probe, when it was sent
	var probes atomic.Int64
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	// post answers the latency and the spans the server accepted: an OTLP
	// partial success names the spans it dropped.
	post := func(body []byte, n int) (time.Duration, int) {
		req, _ := http.NewRequest("POST", *url+"/api/otlp/v1/traces", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/x-protobuf")
		req.Header.Set("X-Assay-Internal-Token", *token)
		req.Header.Set("X-Assay-Project-Id", project.String())
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, 0
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if resp.StatusCode != 200 {
			return d, 0
		}
		er := ptraceotlp.NewExportResponse()
		if err := er.UnmarshalProto(out); err == nil {
			if r := int(er.PartialSuccess().RejectedSpans()); r > 0 {
				rejected.Add(int64(r))
				n -= r
			}
		}
		return d, n
	}

	deadline := time.Now().Add(*dur)
	start := time.Now()
	var wg sync.WaitGroup
	perWorker := 0.0
	if *rate > 0 {
		perWorker = float64(*rate) / float64(*workers) / float64(*batch) // requests/s per worker
	}
	var seq atomic.Int64
	var sampler *backlogSampler
	if *sampleEvery > 0 {
		sampler = startBacklog(ch, project.String(), &accepted, *writerMetrics, *sampleEvery, start)
	}
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := time.Now()
			for time.Now().Before(deadline) {
				if perWorker > 0 {
					if d := time.Until(next); d > 0 {
						time.Sleep(d)
					}
					next = next.Add(time.Duration(float64(time.Second) / perWorker))
				}
				body := request(seq.Add(1), *batch)
				d, n := post(body, *batch)
				sent.Add(int64(*batch))
				if n > 0 {
					accepted.Add(int64(n))
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			}
		}()
	}
	// Freshness probes: one small trace every 250 ms, polled until visible
	// (for the whole window: 1,200 probes in 5 minutes), at most until 2
	// minutes after the end, every 20 ms or every 50th of the time waited
	// so far: a 2 % error, and few polls when a backlog makes them wait.
	var fwg sync.WaitGroup
	for time.Now().Before(deadline) {
		id := seq.Add(1)
		body := request(id, 1)
		if _, n := post(body, 1); n == 1 {
			accepted.Add(1)
			sent.Add(1)
			probes.Add(1)
			t0 := time.Now()
			fwg.Add(1)
			go func() {
				defer fwg.Done()
				tid := fmt.Sprintf("%032x", id)
				for time.Now().Before(deadline.Add(2 * time.Minute)) {
					if visible(client, *url, *token, project.String(), tid) {
						mu.Lock()
						fresh, freshAt = append(fresh, time.Since(t0)), append(freshAt, t0.Sub(start))
						mu.Unlock()
						return
					}
					time.Sleep(max(20*time.Millisecond, time.Since(t0)/50))
				}
			}()
		}
		time.Sleep(250 * time.Millisecond)
	}
	wg.Wait()
	sendTime := time.Since(start)
	var samples []backlogSample
	if sampler != nil {
		samples = sampler.stop()
	}
	fwg.Wait()
	want := uint64(accepted.Load())
	var stored uint64
	var countErr error
	for time.Since(start) < *dur+2*time.Minute {
		if countErr = ch.QueryRow(ctx, "SELECT count() FROM spans WHERE project_id = ?", project.String()).Scan(&stored); countErr == nil && stored >= want {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if countErr != nil {
		fmt.Fprintln(os.Stderr, "counting the stored spans:", countErr)
	}
	total := time.Since(start)
	// count() also counts a redelivered batch twice: check the distinct ids.
	var distinct uint64
	if err := ch.QueryRow(ctx, "SELECT uniqExact(trace_id, span_id) FROM spans WHERE project_id = ?", project.String()).Scan(&distinct); err != nil {
		fmt.Fprintln(os.Stderr, "counting the distinct spans:", err)
	}
	fmt.Printf("distinct spans stored %d (missing %d)\n", distinct, int64(want)-int64(distinct))
	fmt.Printf("spans sent %d, accepted %d (rejected by partial success %d), stored %d\n", sent.Load(), want, rejected.Load(), stored)
	fmt.Printf("ingest: %.0f spans/s accepted of %.0f/s sent over %.1fs\n", float64(want)/sendTime.Seconds(), float64(sent.Load())/sendTime.Seconds(), sendTime.Seconds())
	fmt.Printf("end-to-end: %.0f spans/s (accepted → all visible in ClickHouse after %.1fs)\n", float64(stored)/total.Seconds(), total.Seconds())
	fmt.Printf("ingest latency (request of %d spans): p50 %s p99 %s (n=%d)\n", *batch, pct(lat, 50), pct(lat, 99), len(lat))
	fmt.Printf("freshness (202 → visible through GET /traces/{id}): p50 %s p99 %s (n=%d of %d probes)\n", pct(fresh, 50), pct(fresh, 99), len(fresh), probes.Load())
	extra := ""
	if sampler != nil {
		extra = " " + reportSustain(samples, freshAt, fresh, sendTime, *sampleEvery)
	}
	fmt.Printf("summary %s accepted_rate=%.0f e2e=%.0f accepted=%d missing=%d dup_unmerged=%d p50=%s p99=%s fresh_p50=%s fresh_p99=%s fresh_n=%d/%d%s\n",
		*label, float64(want)/sendTime.Seconds(), float64(stored)/total.Seconds(), want, int64(want)-int64(distinct), int64(stored)-int64(distinct),
		ms(pct(lat, 50)), ms(pct(lat, 99)), ms(pct(fresh, 50)), ms(pct(fresh, 99)), len(fresh), probes.Load(), extra)
	if *raw > 0 {
		rawInsert(ctx, ch, *raw, *rawBatch)
	}
}

var pad = strings.Repeat("lorem ipsum ", 60) // ~700 bytes: ~1 KB spans

// marker is the trace id of a template request; request patches it.
var marker = [16]byte{0xa5, 0x5a, 0xc3, 0x3c, 0x96, 0x69, 0x0f, 0xf0, 0xa5, 0x5a, 0xc3, 0x3c, 0x96, 0x69, 0x0f, 0xf0}

var (
	tmplMu sync.Mutex
	tmpls  = map[int][]byte{}
)

var (
	corpusName = flag.String("corpus", "realistic", "the spans sent: realistic (LLM application traces of varied text, traces.go) or fixed (one ~1 KB span repeated, the figures before the realistic corpus)")
	corpusSeed = flag.Uint64("seed", 1, "seed of the realistic corpus: the same seed, the same spans")
	corpusPool = flag.Int("pool", 20000, "spans of the realistic corpus generated at start and re-sent with new trace ids and times")
)

// realistic is the realistic corpus, built on first use.
var realistic = sync.OnceValue(func() *pool { return newPool(*corpusSeed, *corpusPool, time.Now()) })

// request is a request of n spans of the -corpus: for the realistic one,
// consecutive spans of the pool, trace ids (k, id) (pool.request); for the
// fixed one, n spans of trace id id.
func request(id int64, n int) []byte {
	if *corpusName == "fixed" {
		return fixedRequest(id, n)
	}
	return realistic().request(id, n)
}

// fixedRequest is a request of n spans of trace id: a template of that size,
// built once with pdata, with its trace id patched in. Building each
// request with pdata cost the load generator as much CPU as tracing spent
// on it, on the same cores; the spans are the same either way (their
// timestamps are the template's, at most one run old).
func fixedRequest(id int64, n int) []byte {
	tmplMu.Lock()
	t, ok := tmpls[n]
	if !ok {
		t = build(marker, n)
		tmpls[n] = t
	}
	tmplMu.Unlock()
	var tid [16]byte
	binary.BigEndian.PutUint64(tid[8:], uint64(id))
	return bytes.ReplaceAll(t, marker[:], tid[:])
}

func build(tid pcommon.TraceID, n int) []byte {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "loadgen")
	ss := rs.ScopeSpans().AppendEmpty()
	now := time.Now()
	for i := 0; i < n; i++ {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(tid)
		// i+1, never 0: an all-zero span id is invalid and dropped by the
		// server (byte(i)+1 wrapped to 0 for i = 255, the "lost" spans of
		// the first load runs).
		var sid pcommon.SpanID
		binary.BigEndian.PutUint64(sid[:], uint64(i)+1)
		sp.SetSpanID(sid)
		if i > 0 {
			sp.SetParentSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, 0, 1})
		}
		sp.SetName("llm.call")
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Millisecond)))
		a := sp.Attributes()
		a.PutStr("gen_ai.operation.name", "chat")
		a.PutStr("gen_ai.request.model", "gpt-4o-mini")
		a.PutInt("gen_ai.usage.input_tokens", 120)
		a.PutInt("gen_ai.usage.output_tokens", 40)
		a.PutStr("input.value", pad)
	}
	b, _ := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	return b
}

func visible(c *http.Client, url, token, project, tid string) bool {
	req, _ := http.NewRequest("GET", url+"/api/traces/"+tid, nil)
	req.Header.Set("X-Assay-Internal-Token", token)
	req.Header.Set("X-Assay-Project-Id", project)
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var out struct {
		Count int `json:"count"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return out.Count == 1
}

// ms is d in milliseconds, one decimal.
func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 1, 64) + "ms" }

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100].Round(100 * time.Microsecond)
}

// rawInsert writes the very rows the pipeline stores (loadgen's spans
// normalised as tracing does) straight into ClickHouse with the writer's
// insert path, perInsert rows per insert (50k: the ceiling). The realistic
// corpus's rows are a request of up to 5,000 spans, repeated with a new
// trace id prefix each time round; the fixed one's, its one span.
func rawInsert(ctx context.Context, ch clickhouse.Conn, rows, perInsert int) {
	project := uuid.NewString()
	n := 1
	if *corpusName != "fixed" {
		n = min(rows, 5000)
	}
	td, err := ingest.DecodeOTLP(request(1, n), false)
	if err != nil {
		log.Fatal(err)
	}
	spans, _ := (&spanmodel.Normalizer{}).Batch(ingest.RawSpans(td))
	protos := make([]*spanspb.Span, len(spans))
	attrBytes := 0
	for i, s := range spans {
		protos[i] = chspans.Proto(s, time.Now(), "")
		attrBytes += len(protos[i].AttributesJson)
	}
	start := time.Now()
	done := 0
	for done < rows {
		n := min(perInsert, rows-done)
		b := &spanspb.SpanBatch{ProjectId: project, ReceivedUnixNano: time.Now().UnixNano()}
		for i := 0; i < n; i++ {
			row := done + i
			s := gproto.Clone(protos[row%len(protos)]).(*spanspb.Span)
			if len(protos) == 1 {
				s.TraceId, s.SpanId = fmt.Sprintf("%032x", row), "0000000000000001"
			} else {
				// The trace ids of request(1, n) start with 12 zero digits.
				s.TraceId = fmt.Sprintf("%08x", row/len(protos)) + s.TraceId[8:]
			}
			b.Spans = append(b.Spans, s)
		}
		if _, err := chspans.Insert(ctx, ch, []*spanspb.SpanBatch{b}, func(string, time.Time) time.Time { return time.Now().Add(48 * time.Hour) }); err != nil {
			fmt.Fprintln(os.Stderr, "raw insert:", err)
			return
		}
		done += n
	}
	fmt.Printf("raw ClickHouse insert ceiling: %.0f rows/s (%d rows of %d bytes of attributes on average, %d per insert)\n",
		float64(rows)/time.Since(start).Seconds(), rows, attrBytes/len(protos), perInsert)
}

// timeQueries measures, through the API, GET /traces/{id} of random traces
// and a filtered one-day POST /spans/query over random days of the last 30,
// on the data scripts/bench/query.sh generated (trace t is md5(t), 10 spans
// each, spread over 30 days).
func timeQueries(url, token, project string, n, traces int) {
	client := &http.Client{}
	do := func(method, path string, body []byte) (time.Duration, int, []byte) {
		req, _ := http.NewRequest(method, url+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Assay-Internal-Token", token)
		req.Header.Set("X-Assay-Project-Id", project)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return time.Since(start), resp.StatusCode, out
	}
	var count struct {
		Count int `json:"count"`
	}
	var byID, spans []time.Duration
	for i := 0; i < n; i++ {
		t := (i*7919 + 13) % traces
		d, code, out := do("GET", "/api/traces/"+md5hex(t), nil)
		_ = json.Unmarshal(out, &count)
		if code != 200 || count.Count != 1 {
			log.Fatalf("trace %d: %d %s", t, code, out[:min(len(out), 300)])
		}
		byID = append(byID, d)
	}
	for i := 0; i < n; i++ {
		day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -1-i%28)
		body := fmt.Sprintf(`{"windowing":{"oldest":%q,"newest":%q,"limit":100},`+
			`"filtering":{"operator":"and","conditions":[{"field":"span_type","value":"chat"},{"field":"attributes","key":"ag.meta.request.model","value":"gpt-4o-mini"}]}}`,
			day.Format(time.RFC3339), day.Add(24*time.Hour).Format(time.RFC3339))
		d, code, out := do("POST", "/api/spans/query", []byte(body))
		_ = json.Unmarshal(out, &count)
		if code != 200 || count.Count == 0 {
			fmt.Printf("span query failed after %s: %d %s\n", d.Round(time.Millisecond), code, out[:min(len(out), 300)])
			continue
		}
		spans = append(spans, d)
	}
	fmt.Printf("trace by id (GET /traces/{id}, 10 spans): p50 %s p99 %s max %s (n=%d)\n", pct(byID, 50), pct(byID, 99), pct(byID, 100), n)
	fmt.Printf("one-day filtered span query (POST /spans/query, limit 100): p50 %s p99 %s max %s (n=%d ok of %d)\n", pct(spans, 50), pct(spans, 99), pct(spans, 100), len(spans), n)
}

func md5hex(t int) string {
	sum := md5.Sum([]byte(strconv.Itoa(t)))
	return hex.EncodeToString(sum[:])
}
