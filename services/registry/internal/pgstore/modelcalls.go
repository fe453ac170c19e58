package pgstore

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/services/registry/internal/modelcalls"
)

// ModelCalls is the model-call cache and the provider waits of runs.
type ModelCalls struct{ pool db }

// ModelCalls returns the model-call store over s's pool.
func (s *Store) ModelCalls() *ModelCalls { return &ModelCalls{pool: s.pool} }

var _ modelcalls.Store = (*ModelCalls)(nil)

// Lookup reads the live entries of keys.
func (m *ModelCalls) Lookup(ctx context.Context, project uuid.UUID, keys []string, now time.Time) (map[string]json.RawMessage, error) {
	rows, err := m.pool.Query(ctx, `SELECT key, response FROM model_call_cache
		WHERE project_id = $1 AND key = ANY($2) AND expires_at > $3`, project, keys, now)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]json.RawMessage{}
	for rows.Next() {
		var k string
		var v []byte
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, rows.Err()
}

// Put upserts entries in one statement.
func (m *ModelCalls) Put(ctx context.Context, project uuid.UUID, entries []modelcalls.CachedAnswer, now time.Time) error {
	keys := make([]string, len(entries))
	resps := make([]string, len(entries))
	exp := make([]time.Time, len(entries))
	for i, e := range entries {
		keys[i], resps[i] = e.Key, string(e.Response)
		exp[i] = now.Add(time.Duration(e.TTLSeconds) * time.Second)
	}
	_, err := m.pool.Exec(ctx, `INSERT INTO model_call_cache (project_id, key, response, created_at, expires_at)
		SELECT $1, k, r::jsonb, $4, e FROM unnest($2::text[], $3::text[], $5::timestamptz[]) AS t(k, r, e)
		ON CONFLICT (project_id, key) DO UPDATE SET response = excluded.response, created_at = excluded.created_at,
			expires_at = excluded.expires_at`, project, keys, resps, now, exp)
	return err
}

// DeleteExpired deletes at most limit expired entries.
func (m *ModelCalls) DeleteExpired(ctx context.Context, now time.Time, limit int) error {
	_, err := m.pool.Exec(ctx, `DELETE FROM model_call_cache WHERE ctid = ANY(ARRAY(
		SELECT ctid FROM model_call_cache WHERE expires_at <= $1 LIMIT $2))`, now, limit)
	return err
}

// SetWait upserts a run's wait on a provider; a later until wins.
func (m *ModelCalls) SetWait(ctx context.Context, project, run uuid.UUID, w modelcalls.Wait) error {
	_, err := m.pool.Exec(ctx, `INSERT INTO evaluation_provider_waits (project_id, run_id, provider, until)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (project_id, run_id, provider) DO UPDATE SET until = greatest(evaluation_provider_waits.until, excluded.until)`,
		project, run, w.Provider, w.Until)
	return err
}

// Waits lists run's waits not over at now, the longest first.
func (m *ModelCalls) Waits(ctx context.Context, project, run uuid.UUID, now time.Time) ([]modelcalls.Wait, error) {
	rows, err := m.pool.Query(ctx, `SELECT provider, until FROM evaluation_provider_waits
		WHERE project_id = $1 AND run_id = $2 AND until > $3 ORDER BY until DESC, provider`, project, run, now)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []modelcalls.Wait
	for rows.Next() {
		var w modelcalls.Wait
		if err := rows.Scan(&w.Provider, &w.Until); err != nil {
			return nil, err
		}
		w.Until = w.Until.UTC()
		out = append(out, w)
	}
	return out, rows.Err()
}
