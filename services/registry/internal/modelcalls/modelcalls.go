// Package modelcalls keeps what the runtime's evaluation worker shares
// between replicas about model calls: the content-addressed cache of
// model answers (per project, with a time to live; the decision is
// docs/decisions/0008-model-call-cache-in-postgresql.md), and the runs
// whose cells wait on a provider's rate limit, which a run's progress shows.
package modelcalls

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
)

// Bounds of what one request may carry.
const (
	MaxKeys         = 1000    // keys per lookup, entries per store
	MaxResponseSize = 1 << 20 // one cached answer
	MaxTTL          = 365 * 24 * time.Hour
	MaxWait         = 10 * time.Minute // how far ahead a wait may be announced
	maxProviderLen  = 200
)

// CachedAnswer is one cached answer: Key is the hex SHA-256 the runtime computed
// over the call (provider, model, parameters, messages, tools, response
// format, repeat index); Response is the answer as the runtime stores it.
type CachedAnswer struct {
	Key        string          `json:"key"`
	Response   json.RawMessage `json:"response"`
	TTLSeconds int             `json:"ttl_seconds,omitempty"`
}

// Wait is a provider limit a run's cells wait on, until Until.
type Wait struct {
	Provider string    `json:"provider"`
	Until    time.Time `json:"until"`
}

// Store keeps entries and waits.
type Store interface {
	Lookup(ctx context.Context, project uuid.UUID, keys []string, now time.Time) (map[string]json.RawMessage, error)
	Put(ctx context.Context, project uuid.UUID, entries []CachedAnswer, now time.Time) error
	// DeleteExpired removes at most limit entries past their time to live.
	DeleteExpired(ctx context.Context, now time.Time, limit int) error
	SetWait(ctx context.Context, project, run uuid.UUID, w Wait) error
	Waits(ctx context.Context, project, run uuid.UUID, now time.Time) ([]Wait, error)
}

// Service is the use cases over a Store.
type Service struct {
	Store Store
	Now   func() time.Time
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now().UTC()
}

// Lookup returns the live entries of keys (absent keys are misses).
func (s *Service) Lookup(ctx context.Context, project uuid.UUID, keys []string) (map[string]json.RawMessage, error) {
	if len(keys) > MaxKeys {
		return nil, errs.Field(fmt.Sprintf("List should have at most %d items", MaxKeys), len(keys), "body", "keys")
	}
	for i, k := range keys {
		if !validKey(k) {
			return nil, errs.Field("must be 64 lowercase hex characters (a SHA-256)", k, "body", "keys", i)
		}
	}
	if len(keys) == 0 {
		return map[string]json.RawMessage{}, nil
	}
	return s.Store.Lookup(ctx, project, keys, s.now())
}

// Put stores entries (an existing key is replaced, its time to live
// restarted), then deletes a batch of expired entries of any project, so
// the table stays bounded without a separate sweeper.
func (s *Service) Put(ctx context.Context, project uuid.UUID, entries []CachedAnswer) error {
	if len(entries) > MaxKeys {
		return errs.Field(fmt.Sprintf("List should have at most %d items", MaxKeys), len(entries), "body", "entries")
	}
	for i, e := range entries {
		switch {
		case !validKey(e.Key):
			return errs.Field("must be 64 lowercase hex characters (a SHA-256)", e.Key, "body", "entries", i, "key")
		case len(e.Response) == 0 || !json.Valid(e.Response) || e.Response[0] != '{':
			return errs.Field("must be a JSON object", nil, "body", "entries", i, "response")
		case len(e.Response) > MaxResponseSize:
			return errs.Field(fmt.Sprintf("must be at most %d bytes", MaxResponseSize), len(e.Response), "body", "entries", i, "response")
		case e.TTLSeconds < 1 || time.Duration(e.TTLSeconds)*time.Second > MaxTTL:
			return errs.Field(fmt.Sprintf("must be between 1 and %d seconds", int(MaxTTL/time.Second)), e.TTLSeconds, "body", "entries", i, "ttl_seconds")
		}
	}
	if len(entries) == 0 {
		return nil
	}
	now := s.now()
	if err := s.Store.Put(ctx, project, entries, now); err != nil {
		return err
	}
	return s.Store.DeleteExpired(ctx, now, 100)
}

// SetWait records that run's cells wait on provider's limit until w.Until.
func (s *Service) SetWait(ctx context.Context, project, run uuid.UUID, w Wait) error {
	now := s.now()
	switch {
	case w.Provider == "" || len(w.Provider) > maxProviderLen:
		return errs.Field(fmt.Sprintf("must be 1 to %d characters", maxProviderLen), w.Provider, "body", "provider")
	case w.Until.IsZero() || w.Until.After(now.Add(MaxWait)):
		return errs.Field("must be a time within the next "+MaxWait.String(), w.Until, "body", "until")
	}
	return s.Store.SetWait(ctx, project, run, w)
}

// Waits lists the provider limits run's cells wait on now.
func (s *Service) Waits(ctx context.Context, project, run uuid.UUID) ([]Wait, error) {
	return s.Store.Waits(ctx, project, run, s.now())
}

func validKey(k string) bool {
	if len(k) != 64 {
		return false
	}
	for _, c := range k {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
