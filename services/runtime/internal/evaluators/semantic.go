package evaluators

import (
	"context"
	"fmt"
	"math"

	"github.com/assayhq/assay/pkg/errs"
)

// defaultEmbeddingModel is the compatible platform's embedding model.
const defaultEmbeddingModel = "text-embedding-3-small"

// semanticSimilarity is auto_semantic_similarity: the cosine similarity of
// the embeddings of the output's text and the correct answer's, computed in
// one Embed call, with success when it is >= threshold (default 0.5, in
// [0, 1]). Parameters: embedding_model (or model; default
// text-embedding-3-small) and connection, the named provider key to use.
// A zero vector has no direction: it scores 0.
func semanticSimilarity(ctx context.Context, env Env, req Request) (map[string]any, error) {
	p := req.Parameters
	model, err := stringParam(p, "embedding_model", "")
	if err != nil {
		return nil, err
	}
	if model == "" {
		if model, err = stringParam(p, "model", defaultEmbeddingModel); err != nil {
			return nil, err
		}
	}
	if model == "" {
		model = defaultEmbeddingModel
	}
	conn, err := stringParam(p, "connection", "")
	if err != nil {
		return nil, err
	}
	threshold, ok, err := numberParam(p, "threshold", 0, 1)
	if err != nil {
		return nil, err
	}
	if !ok {
		threshold = 0.5
	}
	_, want, err := correctAnswer(req)
	if err != nil {
		return nil, err
	}
	if env.Embedder == nil {
		return nil, errs.New(errs.Unavailable, "runtime.embeddings_unavailable", "no embeddings provider is configured")
	}
	vecs, err := env.Embedder.Embed(ctx, model, conn, []string{text(req.Outputs), text(want)})
	if err != nil {
		return nil, err
	}
	if len(vecs) != 2 || len(vecs[0]) == 0 || len(vecs[0]) != len(vecs[1]) {
		return nil, errs.New(errs.FailedDependency, "runtime.embeddings_invalid",
			fmt.Sprintf("the embeddings provider answered %s for 2 texts", shape(vecs)))
	}
	score := cosine(vecs[0], vecs[1])
	return map[string]any{"score": score, "success": score >= threshold}, nil
}

// cosine is a·b / (|a| |b|), 0 when either vector is zero or the result is
// not finite.
func cosine(a, b []float64) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	c := dot / (math.Sqrt(na) * math.Sqrt(nb))
	if math.IsNaN(c) || math.IsInf(c, 0) {
		return 0
	}
	return c
}

func shape(vecs [][]float64) string {
	if len(vecs) > 4 {
		return fmt.Sprintf("%d vectors", len(vecs))
	}
	dims := make([]int, len(vecs))
	for i, v := range vecs {
		dims[i] = len(v)
	}
	return fmt.Sprintf("%d vectors of dimensions %v", len(vecs), dims)
}
