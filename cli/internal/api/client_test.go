package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDetail(t *testing.T) {
	assert.Equal(t, "Testset not found.", Detail([]byte(`{"detail":"Testset not found."}`)))
	assert.Equal(t, "Cannot modify a closed evaluation.", Detail([]byte(`{"detail":{"message":"Cannot modify a closed evaluation.","run_id":"r"}}`)))
	assert.Equal(t, "body.testset.slug: Field required; query.limit: bad",
		Detail([]byte(`{"detail":[{"loc":["body","testset","slug"],"msg":"Field required"},{"loc":["query","limit"],"msg":"bad"}]}`)))
	assert.Equal(t, "upstream down", Detail([]byte("upstream\ndown")))
}

func TestStatusErrors(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "ApiKey k", r.Header.Get("Authorization"))
		w.WriteHeader(status)
		w.Write([]byte(`{"detail":"why"}`))
	}))
	defer srv.Close()
	c := New(srv.URL, "k", time.Second)
	for _, tc := range []struct {
		status, code int
		msg          string
	}{
		{401, ExitAuth, "the server refused the API key (401): run `assay login` or set ASSAY_API_KEY: why"},
		{403, ExitAuth, "the API key may not do this (403): why"},
		{404, ExitNotFound, "not found (404): GET /x: why"},
		{422, ExitError, "GET /x: 422 Unprocessable Entity: why"},
		{503, ExitError, "GET /x: 503 Service Unavailable: why"},
	} {
		status = tc.status
		err := c.JSON(context.Background(), "GET", "/x", nil, nil)
		require.Error(t, err)
		assert.Equal(t, tc.code, CodeOf(err))
		assert.Equal(t, tc.msg, err.Error())
	}
	assert.Equal(t, "Access a", (&Client{Key: "Access a"}).Authorization(), "a key with its scheme is sent as given")
}
