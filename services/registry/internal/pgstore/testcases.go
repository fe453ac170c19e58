package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// insertTestcases stores the blobs that are not stored yet, in one statement
// over unnest'ed arrays: blobs are immutable, so an existing id keeps its
// first row (flags, tags and meta included). Every blob of one commit
// belongs to the same testset and shares its creation stamp, so those go
// as scalars (an array of *uuid.UUID would be encoded value by value
// through driver.Valuer, the slowest path in pgx).
func insertTestcases(ctx context.Context, tx pgx.Tx, p uuid.UUID, tcs []versioned.Testcase) error {
	if len(tcs) == 0 {
		return nil
	}
	n := len(tcs)
	ids := make([]pgtype.UUID, 0, n)
	data := make([]string, 0, n)
	flags := make([]*string, 0, n)
	tags := make([]*string, 0, n)
	meta := make([]*string, 0, n)
	seen := make(map[uuid.UUID]struct{}, n)
	for _, tc := range tcs {
		if _, dup := seen[tc.ID]; dup {
			continue
		}
		seen[tc.ID] = struct{}{}
		ids = append(ids, pgtype.UUID{Bytes: tc.ID, Valid: true})
		data = append(data, string(tc.Data))
		flags, tags, meta = append(flags, rawPtr(tc.Flags)), append(tags, rawPtr(tc.Tags)), append(meta, rawPtr(tc.Meta))
	}
	first := tcs[0]
	_, err := tx.Exec(ctx, `INSERT INTO testcases (project_id, id, set_id, data, flags, tags, meta, created_at, created_by_id)
		SELECT $1, t.id, $2, t.data::json, t.flags::jsonb, t.tags::jsonb, t.meta::jsonb, $7, $8
		FROM unnest($3::uuid[], $4::text[], $5::text[], $6::text[], $9::text[]) AS t(id, data, flags, tags, meta)
		ON CONFLICT (project_id, id) DO NOTHING`, p, first.SetID, ids, data, flags, tags, first.CreatedAt, first.CreatedByID, meta)
	if err != nil {
		return fmt.Errorf("insert testcases: %w", err)
	}
	return nil
}

func rawPtr(b json.RawMessage) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

// toPG converts ids for pgx: uuid.UUID goes through driver.Valuer (a
// string per value), pgtype.UUID is encoded in binary.
func toPG(ids []uuid.UUID) []pgtype.UUID {
	if ids == nil {
		return nil
	}
	out := make([]pgtype.UUID, len(ids))
	for i, id := range ids {
		out[i] = pgtype.UUID{Bytes: id, Valid: true}
	}
	return out
}

// fromPG is the inverse of toPG; a NULL array stays nil.
func fromPG(ids []pgtype.UUID) []uuid.UUID {
	if ids == nil {
		return nil
	}
	out := make([]uuid.UUID, len(ids))
	for i, id := range ids {
		out[i] = id.Bytes
	}
	return out
}

const testcaseCols = `id, set_id, data::text, flags, tags, meta, created_at, created_by_id`

func scanTestcase(row pgx.Row) (*versioned.Testcase, error) {
	var tc versioned.Testcase
	var data string
	var id, set, by pgtype.UUID // binary; uuid.UUID would be scanned from text
	if err := row.Scan(&id, &set, &data, &tc.Flags, &tc.Tags, &tc.Meta, &tc.CreatedAt, &by); err != nil {
		return nil, err
	}
	tc.ID, tc.Data = id.Bytes, json.RawMessage(data)
	tc.SetID, tc.CreatedByID = optUUID(set), optUUID(by)
	return &tc, nil
}

// Testcases returns the blobs with the given ids, in the order of ids
// (duplicates repeated); ids that do not exist are left out.
func (s *Store) Testcases(ctx context.Context, p uuid.UUID, ids []uuid.UUID) ([]versioned.Testcase, error) {
	if len(ids) == 0 {
		return []versioned.Testcase{}, nil
	}
	uniq := slices.Clone(ids)
	slices.SortFunc(uniq, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	uniq = slices.Compact(uniq)
	rows, err := s.pool.Query(ctx, `SELECT `+testcaseCols+` FROM testcases WHERE project_id = $1 AND id = ANY($2)`, p, toPG(uniq))
	if err != nil {
		return nil, fmt.Errorf("load testcases: %w", err)
	}
	found, err := collect(rows, scanTestcase)
	if err != nil {
		return nil, fmt.Errorf("load testcases: %w", err)
	}
	byID := make(map[uuid.UUID]int, len(found))
	for i, tc := range found {
		byID[tc.ID] = i
	}
	out := make([]versioned.Testcase, 0, len(ids))
	for _, id := range ids {
		if i, ok := byID[id]; ok {
			out = append(out, found[i])
		}
	}
	return out, nil
}

// TestcasesBySet pages every blob ever committed to the testset setID, by
// created_at then id (descending when asked), after the cursor in win.
func (s *Store) TestcasesBySet(ctx context.Context, p, setID uuid.UUID, win *versioned.Windowing) ([]versioned.Testcase, error) {
	args := []any{p, setID}
	cond, order := "", " ORDER BY created_at, id"
	desc := win != nil && win.Order != nil && *win.Order == "descending"
	if desc {
		order = " ORDER BY created_at DESC, id DESC"
	}
	if win != nil {
		if win.Next != nil && win.Oldest != nil {
			args = append(args, *win.Oldest, *win.Next)
			if desc {
				cond += " AND (created_at, id) < ($3, $4)"
			} else {
				cond += " AND (created_at, id) > ($3, $4)"
			}
		} else if win.Next != nil {
			args = append(args, *win.Next)
			if desc {
				cond += " AND id < $3"
			} else {
				cond += " AND id > $3"
			}
		}
		if n := win.LimitValue(); n > 0 {
			order += fmt.Sprintf(" LIMIT %d", n)
		}
	}
	rows, err := s.pool.Query(ctx, `SELECT `+testcaseCols+` FROM testcases WHERE project_id = $1 AND set_id = $2`+cond+order, args...)
	if err != nil {
		return nil, fmt.Errorf("query testcases: %w", err)
	}
	return collect(rows, scanTestcase)
}

func optUUID(u pgtype.UUID) *uuid.UUID {
	if !u.Valid {
		return nil
	}
	id := uuid.UUID(u.Bytes)
	return &id
}
