package wire

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
)

func TestObjKeepsOrderAndLeavesOutNulls(t *testing.T) {
	var nilID *uuid.UUID
	var nilStr *string
	id := uuid.MustParse("6f1c3b5e-0000-4000-8000-000000000001")
	s := "x"
	o := NewObj().Put("z", 1).Put("a", "two").Put("none", nilID).Put("nostr", nilStr).
		Put("raw", json.RawMessage(nil)).Put("map", map[string]int(nil)).
		Put("id", id).Put("p", &s).Put("m", json.RawMessage(`{"k":true}`))
	assert.Equal(t, `{"z":1,"a":"two","id":"6f1c3b5e-0000-4000-8000-000000000001","p":"x","m":{"k":true}}`, string(o.Done()))
}

func TestObjEscapes(t *testing.T) {
	o := NewObj().Put("q\"k", "line\n\"<tag>\"\u2028")
	var back map[string]string
	assert.NoError(t, json.Unmarshal(o.Done(), &back))
	assert.Equal(t, map[string]string{"q\"k": "line\n\"<tag>\"\u2028"}, back)
}

func TestObjTimesAreMicrosecondsUTC(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6_000, time.FixedZone("x", 3600))
	assert.Equal(t, `{"t":"2026-01-02T02:04:05.000006Z"}`, string(NewObj().Put("t", at).Done()))
}

func TestEnvelopeAndList(t *testing.T) {
	assert.Equal(t, `{"count":0}`, string(Envelope("testset", nil)))
	assert.Equal(t, `{"count":1,"testset":{"id":"a"}}`, string(Envelope("testset", NewObj().Put("id", "a"))))
	assert.Equal(t, `{"count":2,"xs":[1,2]}`, string(List("xs", []json.RawMessage{json.RawMessage("1"), json.RawMessage("2")}, nil)))
	assert.Equal(t, `{"count":0,"xs":[],"windowing":{"next":"n"}}`, string(List("xs", nil, json.RawMessage(`{"next":"n"}`))))
}

func TestNestedObjAndAppend(t *testing.T) {
	inner := NewObj().Put("b", true)
	o := NewObj().Put("in", inner)
	o.Key("ids")
	o.Append(func(b []byte) []byte { return AppendIDs(b, []uuid.UUID{uuid.Nil}) })
	assert.Equal(t, `{"in":{"b":true},"ids":["00000000-0000-0000-0000-000000000000"]}`, string(o.Done()))
}
