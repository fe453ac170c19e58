package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/pkg/roles"
	"github.com/assayhq/assay/services/gateway/internal/accounts"
)

// level names a membership level's tables and columns.
type level struct {
	entity, memberships, col string
	// projects is the condition on projects p selecting the projects
	// under a target $1 of this level.
	projects string
}

var levels = [...]level{
	accounts.OrganizationLevel: {"organizations", "organization_memberships", "organization_id", "p.organization_id = $1"},
	accounts.WorkspaceLevel:    {"workspaces", "workspace_memberships", "workspace_id", "p.workspace_id = $1"},
	accounts.ProjectLevel:      {"projects", "project_memberships", "project_id", "p.id = $1"},
}

// rank orders roles in SQL like roles.All (1 = owner).
const rank = `array_position(ARRAY['owner','admin','editor','annotator','viewer'], %s)`

// Access resolves the user's role on the target in one query
// (accounts.TeamStore.Access).
func (s *Store) Access(ctx context.Context, lv accounts.Level, id, userID uuid.UUID) (accounts.Access, error) {
	var q string
	switch lv {
	case accounts.OrganizationLevel:
		q = `SELECT o.id, '00000000-0000-0000-0000-000000000000'::uuid, o.owner_user_id, COALESCE(
				CASE WHEN o.owner_user_id = $2 THEN 'owner' END,
				(SELECT role FROM organization_memberships WHERE organization_id = o.id AND user_id = $2),
				CASE WHEN EXISTS (SELECT 1 FROM workspace_memberships m JOIN workspaces w ON w.id = m.workspace_id
						WHERE w.organization_id = o.id AND m.user_id = $2)
					OR EXISTS (SELECT 1 FROM project_memberships m JOIN projects p ON p.id = m.project_id
						WHERE p.organization_id = o.id AND m.user_id = $2) THEN 'viewer' END,
				'')
			FROM organizations o WHERE o.id = $1`
	case accounts.WorkspaceLevel:
		q = `SELECT o.id, w.id, o.owner_user_id, COALESCE(
				CASE WHEN o.owner_user_id = $2 THEN 'owner' END,
				(SELECT role FROM workspace_memberships WHERE workspace_id = w.id AND user_id = $2),
				(SELECT role FROM organization_memberships WHERE organization_id = o.id AND user_id = $2),
				CASE WHEN EXISTS (SELECT 1 FROM project_memberships m JOIN projects p ON p.id = m.project_id
						WHERE p.workspace_id = w.id AND m.user_id = $2) THEN 'viewer' END,
				'')
			FROM workspaces w JOIN organizations o ON o.id = w.organization_id WHERE w.id = $1`
	default:
		q = `SELECT o.id, p.workspace_id, o.owner_user_id, COALESCE(
				CASE WHEN o.owner_user_id = $2 THEN 'owner' END,
				(SELECT role FROM project_memberships WHERE project_id = p.id AND user_id = $2),
				(SELECT role FROM workspace_memberships WHERE workspace_id = p.workspace_id AND user_id = $2),
				(SELECT role FROM organization_memberships WHERE organization_id = o.id AND user_id = $2),
				'')
			FROM projects p JOIN organizations o ON o.id = p.organization_id WHERE p.id = $1`
	}
	var a accounts.Access
	var role string
	err := s.pool.QueryRow(ctx, q, id, userID).Scan(&a.OrganizationID, &a.WorkspaceID, &a.OwnerUserID, &role)
	if errors.Is(err, pgx.ErrNoRows) {
		return accounts.Access{}, nil
	}
	if err != nil {
		return accounts.Access{}, fmt.Errorf("resolve %s role: %w", lv, err)
	}
	a.Exists, a.Role = true, roles.Role(role)
	return a, nil
}

// CreateOrganization inserts the organization, its optional workspace and
// project, and the memberships (organization, workspace, project order).
func (s *Store) CreateOrganization(ctx context.Context, o accounts.Organization, w *accounts.Workspace, p *accounts.Project, ms []accounts.Membership) error {
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO organizations (id, name, slug, description, owner_user_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, o.ID, o.Name, o.Slug, o.Description, o.OwnerUserID, o.CreatedAt)
	if w != nil {
		queueWorkspace(b, *w)
	}
	if p != nil {
		queueProject(b, *p)
	}
	for i, m := range ms {
		queueMembership(b, accounts.Level(i), m)
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return tx.SendBatch(ctx, b).Close() })
	if err != nil {
		return mapWriteErr(err, "create organization", o.Slug)
	}
	return nil
}

func queueWorkspace(b *pgx.Batch, w accounts.Workspace) {
	b.Queue(`INSERT INTO workspaces (id, organization_id, name, description, created_at)
		VALUES ($1, $2, $3, $4, $5)`, w.ID, w.OrganizationID, w.Name, w.Description, w.CreatedAt)
}

func queueProject(b *pgx.Batch, p accounts.Project) {
	b.Queue(`INSERT INTO projects (id, organization_id, workspace_id, name, description, is_default, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, p.ID, p.OrganizationID, p.WorkspaceID, p.Name, p.Description, p.IsDefault, p.CreatedAt)
}

func queueMembership(b *pgx.Batch, lv accounts.Level, m accounts.Membership) {
	l := levels[lv]
	b.Queue(`INSERT INTO `+l.memberships+` (id, `+l.col+`, user_id, role, created_at) VALUES ($1, $2, $3, $4, $5)`,
		m.ID, m.TargetID, m.UserID, m.Role, m.CreatedAt)
}

// mapWriteErr turns the constraint errors a client can cause into 409s
// (a taken slug, a duplicate membership) and 404s (a missing parent).
func mapWriteErr(err error, what string, slug *string) error {
	var pe *pgconn.PgError
	errors.As(err, &pe)
	switch {
	case pgxutil.IsUniqueViolation(err) && pe.ConstraintName == "organizations_slug_key":
		return conflict(fmt.Sprintf("An organization with slug '%s' already exists.", deref(slug)), "slug", deref(slug))
	case pgxutil.IsUniqueViolation(err) && pe.ConstraintName == "users_email_key":
		return errs.Message(errs.Conflict, "accounts.email_taken", "A user with this email already exists.", nil)
	case pgxutil.IsUniqueViolation(err) && pe.ConstraintName == "user_identities_method_subject_key":
		return conflict("An identity with this method and subject already exists.", "subject", pe.Detail)
	case pgxutil.IsUniqueViolation(err) && pe.ConstraintName == "invitations_pending":
		return errs.Message(errs.Conflict, "invitations.pending",
			"An invitation to this email is already pending in this workspace: resend it instead.", nil)
	case pgxutil.IsUniqueViolation(err):
		return errs.Message(errs.Conflict, "accounts.membership_exists", "This user is already a member there.", nil)
	case pgxutil.IsForeignKeyViolation(err):
		return errs.Message(errs.NotFound, "accounts.not_found",
			"A referenced user, organization, workspace or project does not exist.", map[string]any{"constraint": pe.ConstraintName})
	}
	return fmt.Errorf("%s: %w", what, err)
}

const orgCols = `o.id, o.name, o.slug, o.description, o.owner_user_id, o.created_at, o.flags`

func scanOrg(r pgx.Row, extra ...any) (accounts.Organization, error) {
	var o accounts.Organization
	err := r.Scan(append([]any{&o.ID, &o.Name, &o.Slug, &o.Description, &o.OwnerUserID, &o.CreatedAt, &o.Flags}, extra...)...)
	return o, err
}

const wsCols = `w.id, w.organization_id, w.name, w.description, w.created_at`

func scanWorkspace(r pgx.Row, extra ...any) (accounts.Workspace, error) {
	var w accounts.Workspace
	err := r.Scan(append([]any{&w.ID, &w.OrganizationID, &w.Name, &w.Description, &w.CreatedAt}, extra...)...)
	return w, err
}

const prjCols = `p.id, p.organization_id, p.workspace_id, p.name, p.description, p.is_default, p.created_at`

func scanProject(r pgx.Row, extra ...any) (accounts.Project, error) {
	var p accounts.Project
	err := r.Scan(append([]any{&p.ID, &p.OrganizationID, &p.WorkspaceID, &p.Name, &p.Description, &p.IsDefault, &p.CreatedAt}, extra...)...)
	return p, err
}

func one[T any](v T, err error, kind string, id uuid.UUID) (T, error) {
	if errors.Is(err, pgx.ErrNoRows) {
		return v, accounts.ErrNotFound(kind, id)
	}
	if err != nil {
		return v, fmt.Errorf("read %s: %w", kind, err)
	}
	return v, nil
}

// Organization reads one organization.
func (s *Store) Organization(ctx context.Context, id uuid.UUID) (accounts.Organization, error) {
	o, err := scanOrg(s.pool.QueryRow(ctx, `SELECT `+orgCols+` FROM organizations o WHERE o.id = $1`, id))
	return one(o, err, "organization", id)
}

// Organizations lists the organizations linked to the user, in the order
// the user joined them.
func (s *Store) Organizations(ctx context.Context, userID uuid.UUID) ([]accounts.OrganizationRole, error) {
	rows, _ := s.pool.Query(ctx, `
		WITH links AS (
			SELECT id AS org, created_at AS since FROM organizations WHERE owner_user_id = $1
			UNION ALL SELECT organization_id, created_at FROM organization_memberships WHERE user_id = $1
			UNION ALL SELECT w.organization_id, m.created_at FROM workspace_memberships m JOIN workspaces w ON w.id = m.workspace_id WHERE m.user_id = $1
			UNION ALL SELECT p.organization_id, m.created_at FROM project_memberships m JOIN projects p ON p.id = m.project_id WHERE m.user_id = $1
		), orgs AS (SELECT org, min(since) AS since FROM links GROUP BY org)
		SELECT `+orgCols+`, COALESCE(CASE WHEN o.owner_user_id = $1 THEN 'owner' END,
			(SELECT role FROM organization_memberships WHERE organization_id = o.id AND user_id = $1), 'viewer')
		FROM orgs JOIN organizations o ON o.id = orgs.org ORDER BY orgs.since, o.id`, userID)
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (accounts.OrganizationRole, error) {
		var or accounts.OrganizationRole
		o, err := scanOrg(r, &or.Role)
		or.Organization = o
		return or, err
	})
	if err != nil {
		return nil, fmt.Errorf("list organizations: %w", err)
	}
	return list, nil
}

// UpdateOrganization sets the given fields.
func (s *Store) UpdateOrganization(ctx context.Context, id uuid.UUID, ch accounts.OrgChange) (accounts.Organization, error) {
	// flags merge key by key: a client that sends one flag keeps the others.
	var flags *string // SQL NULL when no flag is set (a nil map would be JSON null)
	if ch.Flags != nil {
		b, err := json.Marshal(ch.Flags)
		if err != nil {
			return accounts.Organization{}, err
		}
		f := string(b)
		flags = &f
	}
	o, err := scanOrg(s.pool.QueryRow(ctx, `UPDATE organizations o SET name = COALESCE($2, name), slug = COALESCE($3, slug),
		description = COALESCE($4, description), flags = flags || COALESCE($5::jsonb, '{}')
		WHERE id = $1 RETURNING `+orgCols, id, ch.Name, ch.Slug, ch.Description, flags))
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return o, mapWriteErr(err, "update organization", ch.Slug)
	}
	return one(o, err, "organization", id)
}

// ProjectIDs lists the projects under the target.
func (s *Store) ProjectIDs(ctx context.Context, lv accounts.Level, id uuid.UUID) ([]uuid.UUID, error) {
	rows, _ := s.pool.Query(ctx, `SELECT p.id FROM projects p WHERE `+levels[lv].projects+` ORDER BY p.id`, id)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("list projects of %s: %w", lv, err)
	}
	return ids, nil
}

// Delete deletes the entity; the foreign keys cascade to everything below
// it (memberships, invitations, keys: the api_keys trigger tells the
// other verifiers).
func (s *Store) Delete(ctx context.Context, lv accounts.Level, id uuid.UUID) ([]string, bool, error) {
	var prefixes []string
	var found bool
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, `SELECT k.prefix FROM api_keys k JOIN projects p ON p.id = k.project_id WHERE `+levels[lv].projects, id)
		var err error
		if prefixes, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM `+levels[lv].entity+` WHERE id = $1`, id)
		found = tag.RowsAffected() == 1
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("delete %s: %w", lv, err)
	}
	return prefixes, found, nil
}

// TransferOwnership moves the organization to another user linked to it.
func (s *Store) TransferOwnership(ctx context.Context, orgID, from, to uuid.UUID) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var linked bool
		err := tx.QueryRow(ctx, `SELECT
			EXISTS (SELECT 1 FROM organization_memberships WHERE organization_id = $1 AND user_id = $2)
			OR EXISTS (SELECT 1 FROM workspace_memberships m JOIN workspaces w ON w.id = m.workspace_id WHERE w.organization_id = $1 AND m.user_id = $2)
			OR EXISTS (SELECT 1 FROM project_memberships m JOIN projects p ON p.id = m.project_id WHERE p.organization_id = $1 AND m.user_id = $2)`,
			orgID, to).Scan(&linked)
		if err != nil {
			return err
		}
		if !linked {
			return accounts.ErrNotOrgMember
		}
		tag, err := tx.Exec(ctx, `UPDATE organizations SET owner_user_id = $3 WHERE id = $1 AND owner_user_id = $2`, orgID, from, to)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return errs.Message(errs.Conflict, "accounts.owner_changed", "The organization's owner changed meanwhile; retry.", nil)
		}
		// The previous owner's owner memberships in the organization's
		// workspaces and projects would keep them an owner there.
		if _, err := tx.Exec(ctx, `UPDATE workspace_memberships SET role = 'admin' WHERE user_id = $2 AND role = 'owner'
			AND workspace_id IN (SELECT id FROM workspaces WHERE organization_id = $1)`, orgID, from); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE project_memberships SET role = 'admin' WHERE user_id = $2 AND role = 'owner'
			AND project_id IN (SELECT id FROM projects WHERE organization_id = $1)`, orgID, from); err != nil {
			return err
		}
		for _, m := range []struct {
			user uuid.UUID
			role string
		}{{to, "owner"}, {from, "admin"}} {
			if _, err := tx.Exec(ctx, `INSERT INTO organization_memberships (id, organization_id, user_id, role) VALUES ($1, $2, $3, $4)
				ON CONFLICT (organization_id, user_id) DO UPDATE SET role = EXCLUDED.role`, uuid.Must(uuid.NewV7()), orgID, m.user, m.role); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && errs.KindOf(err) == errs.Internal {
		return fmt.Errorf("transfer ownership: %w", err)
	}
	return err
}

// CreateWorkspace inserts a workspace.
func (s *Store) CreateWorkspace(ctx context.Context, w accounts.Workspace) error {
	b := &pgx.Batch{}
	queueWorkspace(b, w)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return mapWriteErr(err, "create workspace", nil)
	}
	return nil
}

// Workspace reads one workspace.
func (s *Store) Workspace(ctx context.Context, id uuid.UUID) (accounts.Workspace, error) {
	w, err := scanWorkspace(s.pool.QueryRow(ctx, `SELECT `+wsCols+` FROM workspaces w WHERE w.id = $1`, id))
	return one(w, err, "workspace", id)
}

// Workspaces lists the workspaces the user has a role in.
func (s *Store) Workspaces(ctx context.Context, userID uuid.UUID) ([]accounts.WorkspaceRole, error) {
	rows, _ := s.pool.Query(ctx, `
		WITH links AS (
			SELECT w.id AS ws, o.created_at AS since FROM workspaces w JOIN organizations o ON o.id = w.organization_id WHERE o.owner_user_id = $1
			UNION ALL SELECT w.id, m.created_at FROM organization_memberships m JOIN workspaces w ON w.organization_id = m.organization_id WHERE m.user_id = $1
			UNION ALL SELECT workspace_id, created_at FROM workspace_memberships WHERE user_id = $1
			UNION ALL SELECT p.workspace_id, m.created_at FROM project_memberships m JOIN projects p ON p.id = m.project_id WHERE m.user_id = $1
		), wss AS (SELECT ws, min(since) AS since FROM links GROUP BY ws)
		SELECT `+wsCols+`, COALESCE(CASE WHEN o.owner_user_id = $1 THEN 'owner' END,
			(SELECT role FROM workspace_memberships WHERE workspace_id = w.id AND user_id = $1),
			(SELECT role FROM organization_memberships WHERE organization_id = w.organization_id AND user_id = $1), 'viewer')
		FROM wss JOIN workspaces w ON w.id = wss.ws JOIN organizations o ON o.id = w.organization_id
		ORDER BY wss.since, w.created_at, w.id`, userID)
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (accounts.WorkspaceRole, error) {
		var wr accounts.WorkspaceRole
		w, err := scanWorkspace(r, &wr.Role)
		wr.Workspace = w
		return wr, err
	})
	if err != nil {
		return nil, fmt.Errorf("list workspaces: %w", err)
	}
	return list, nil
}

// UpdateWorkspace sets the given fields.
func (s *Store) UpdateWorkspace(ctx context.Context, id uuid.UUID, ch accounts.EntityChange) (accounts.Workspace, error) {
	w, err := scanWorkspace(s.pool.QueryRow(ctx, `UPDATE workspaces w SET name = COALESCE($2, name),
		description = COALESCE($3, description) WHERE id = $1 RETURNING `+wsCols, id, ch.Name, ch.Description))
	return one(w, err, "workspace", id)
}

// CreateProject inserts a project.
func (s *Store) CreateProject(ctx context.Context, p accounts.Project) error {
	b := &pgx.Batch{}
	queueProject(b, p)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return mapWriteErr(err, "create project", nil)
	}
	return nil
}

// Project reads one project.
func (s *Store) Project(ctx context.Context, id uuid.UUID) (accounts.Project, error) {
	p, err := scanProject(s.pool.QueryRow(ctx, `SELECT `+prjCols+` FROM projects p WHERE p.id = $1`, id))
	return one(p, err, "project", id)
}

// projectsQuery selects every project user $1 has a role in, with the
// role (Store.ProjectRole's rule), oldest link first.
const projectsQuery = `
	WITH links AS (
		SELECT p.id AS prj, o.created_at AS since FROM projects p JOIN organizations o ON o.id = p.organization_id WHERE o.owner_user_id = $1
		UNION ALL SELECT p.id, m.created_at FROM organization_memberships m JOIN projects p ON p.organization_id = m.organization_id WHERE m.user_id = $1
		UNION ALL SELECT p.id, m.created_at FROM workspace_memberships m JOIN projects p ON p.workspace_id = m.workspace_id WHERE m.user_id = $1
		UNION ALL SELECT project_id, created_at FROM project_memberships WHERE user_id = $1
	), prjs AS (SELECT prj, min(since) AS since FROM links GROUP BY prj)
	SELECT ` + prjCols + `, COALESCE(CASE WHEN o.owner_user_id = $1 THEN 'owner' END,
		(SELECT role FROM project_memberships WHERE project_id = p.id AND user_id = $1),
		(SELECT role FROM workspace_memberships WHERE workspace_id = p.workspace_id AND user_id = $1),
		(SELECT role FROM organization_memberships WHERE organization_id = p.organization_id AND user_id = $1))
	FROM prjs JOIN projects p ON p.id = prjs.prj JOIN organizations o ON o.id = p.organization_id
	ORDER BY prjs.since, p.created_at, p.id`

// Projects lists every project the user has a role in.
func (s *Store) Projects(ctx context.Context, userID uuid.UUID) ([]accounts.ProjectRole, error) {
	return collectProjects(s.pool.Query(ctx, projectsQuery, userID))
}

func collectProjects(rows pgx.Rows, err error) ([]accounts.ProjectRole, error) {
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (accounts.ProjectRole, error) {
		var pr accounts.ProjectRole
		p, err := scanProject(r, &pr.Role)
		pr.Project = p
		return pr, err
	})
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return list, nil
}

// UpdateProject sets the given fields.
func (s *Store) UpdateProject(ctx context.Context, id uuid.UUID, ch accounts.EntityChange) (accounts.Project, error) {
	p, err := scanProject(s.pool.QueryRow(ctx, `UPDATE projects p SET name = COALESCE($2, name),
		description = COALESCE($3, description) WHERE id = $1 RETURNING `+prjCols, id, ch.Name, ch.Description))
	return one(p, err, "project", id)
}

func memberQuery(lv accounts.Level, from string) string {
	l := levels[lv]
	return `SELECT m.id, m.` + l.col + `, m.user_id, u.email, u.username, u.name, m.role, m.created_at
		FROM ` + from + ` m JOIN users u ON u.id = m.user_id`
}

func scanMember(r pgx.Row) (accounts.Member, error) {
	var m accounts.Member
	err := r.Scan(&m.ID, &m.TargetID, &m.UserID, &m.Email, &m.Username, &m.Name, &m.Role, &m.CreatedAt)
	return m, err
}

// Members lists the memberships of the target, oldest first.
func (s *Store) Members(ctx context.Context, lv accounts.Level, id uuid.UUID) ([]accounts.Member, error) {
	l := levels[lv]
	rows, _ := s.pool.Query(ctx, memberQuery(lv, l.memberships)+` WHERE m.`+l.col+` = $1 ORDER BY m.created_at, m.id`, id)
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (accounts.Member, error) { return scanMember(r) })
	if err != nil {
		return nil, fmt.Errorf("list %s members: %w", lv, err)
	}
	return list, nil
}

// Member returns one membership, nil if none.
func (s *Store) Member(ctx context.Context, lv accounts.Level, id, userID uuid.UUID) (*accounts.Member, error) {
	l := levels[lv]
	m, err := scanMember(s.pool.QueryRow(ctx, memberQuery(lv, l.memberships)+` WHERE m.`+l.col+` = $1 AND m.user_id = $2`, id, userID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s member: %w", lv, err)
	}
	return &m, nil
}

// SetMember upserts the membership's role.
func (s *Store) SetMember(ctx context.Context, lv accounts.Level, in accounts.Membership) (accounts.Member, error) {
	l := levels[lv]
	m, err := scanMember(s.pool.QueryRow(ctx, `WITH m AS (
		INSERT INTO `+l.memberships+` (id, `+l.col+`, user_id, role, created_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (`+l.col+`, user_id) DO UPDATE SET role = EXCLUDED.role RETURNING *)
		`+memberQuery(lv, "m"), in.ID, in.TargetID, in.UserID, in.Role, in.CreatedAt))
	if err != nil {
		return m, mapWriteErr(err, "set member", nil)
	}
	return m, nil
}

// RemoveMember deletes the user's memberships at and below the target and
// revokes the user's keys in the projects below it.
func (s *Store) RemoveMember(ctx context.Context, lv accounts.Level, id, userID uuid.UUID) ([]string, bool, error) {
	var prefixes []string
	var n int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for sub := lv; sub <= accounts.ProjectLevel; sub++ {
			l := levels[sub]
			q := `DELETE FROM ` + l.memberships + ` m WHERE m.user_id = $2 AND m.` + l.col + ` IN (`
			switch {
			case sub == lv:
				q += `$1)`
			case sub == accounts.WorkspaceLevel:
				q += `SELECT id FROM workspaces WHERE organization_id = $1)`
			default:
				q += `SELECT p.id FROM projects p WHERE ` + levels[lv].projects + `)`
			}
			tag, err := tx.Exec(ctx, q, id, userID)
			if err != nil {
				return err
			}
			n += tag.RowsAffected()
		}
		var err error
		prefixes, err = revokeKeys(ctx, tx, lv, id, userID)
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("remove %s member: %w", lv, err)
	}
	return prefixes, n > 0, nil
}

// revokeKeys revokes the user's keys in the projects under the target.
func revokeKeys(ctx context.Context, tx pgx.Tx, lv accounts.Level, id, userID uuid.UUID) ([]string, error) {
	rows, _ := tx.Query(ctx, `UPDATE api_keys k SET revoked_at = now() FROM projects p
		WHERE p.id = k.project_id AND `+levels[lv].projects+` AND k.created_by_id = $2 AND k.revoked_at IS NULL
		RETURNING k.prefix`, id, userID)
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// UpdateUser sets the user's username and name when given.
func (s *Store) UpdateUser(ctx context.Context, id uuid.UUID, username, name *string) error {
	tag, err := s.pool.Exec(ctx, `UPDATE users SET username = COALESCE($2, username), name = COALESCE($3, name),
		updated_at = now() WHERE id = $1`, id, username, name)
	if err != nil {
		return fmt.Errorf("update user: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return accounts.ErrNoProfile
	}
	return nil
}

// SharedOrganizations lists the user's organizations that have another
// member at any level.
func (s *Store) SharedOrganizations(ctx context.Context, userID uuid.UUID) ([]uuid.UUID, error) {
	rows, _ := s.pool.Query(ctx, `SELECT o.id FROM organizations o WHERE o.owner_user_id = $1 AND (
		EXISTS (SELECT 1 FROM organization_memberships m WHERE m.organization_id = o.id AND m.user_id <> $1)
		OR EXISTS (SELECT 1 FROM workspace_memberships m JOIN workspaces w ON w.id = m.workspace_id WHERE w.organization_id = o.id AND m.user_id <> $1)
		OR EXISTS (SELECT 1 FROM project_memberships m JOIN projects p ON p.id = m.project_id WHERE p.organization_id = o.id AND m.user_id <> $1))`, userID)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("list shared organizations: %w", err)
	}
	return ids, nil
}

// OwnedProjectIDs lists the projects of the organizations the users own.
func (s *Store) OwnedProjectIDs(ctx context.Context, refs []accounts.UserRef) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	var emails []string
	for _, r := range refs {
		if r.ID != nil {
			ids = append(ids, *r.ID)
		}
		if r.Email != nil {
			emails = append(emails, *r.Email)
		}
	}
	rows, _ := s.pool.Query(ctx, `SELECT p.id FROM projects p JOIN organizations o ON o.id = p.organization_id
		JOIN users u ON u.id = o.owner_user_id
		WHERE u.id = ANY($1) OR lower(u.email) = ANY(SELECT lower(e) FROM unnest($2::text[]) e) ORDER BY p.id`, ids, emails)
	out, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("list owned projects: %w", err)
	}
	return out, nil
}

const invCols = `id, organization_id, workspace_id, email, role, project_ids, token_hash, status, invited_by_id, created_at, expires_at, accepted_at`

func scanInvitation(r pgx.Row) (accounts.Invitation, error) {
	var i accounts.Invitation
	err := r.Scan(&i.ID, &i.OrganizationID, &i.WorkspaceID, &i.Email, &i.Role, &i.ProjectIDs, &i.TokenHash, &i.Status,
		&i.InvitedByID, &i.CreatedAt, &i.ExpiresAt, &i.AcceptedAt)
	return i, err
}

// CreateInvitation stores an invitation; a pending one for the same email
// and workspace is a 409.
func (s *Store) CreateInvitation(ctx context.Context, i accounts.Invitation) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO invitations (`+invCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		i.ID, i.OrganizationID, i.WorkspaceID, i.Email, i.Role, i.ProjectIDs, i.TokenHash, i.Status, i.InvitedByID, i.CreatedAt, i.ExpiresAt, i.AcceptedAt)
	if err != nil {
		return mapWriteErr(err, "create invitation", nil)
	}
	return nil
}

// Invitations lists the workspace's invitations, newest first.
func (s *Store) Invitations(ctx context.Context, workspaceID uuid.UUID) ([]accounts.Invitation, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+invCols+` FROM invitations WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC`, workspaceID)
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (accounts.Invitation, error) { return scanInvitation(r) })
	if err != nil {
		return nil, fmt.Errorf("list invitations: %w", err)
	}
	return list, nil
}

// Invitation reads one invitation of the workspace.
func (s *Store) Invitation(ctx context.Context, workspaceID, id uuid.UUID) (accounts.Invitation, error) {
	i, err := scanInvitation(s.pool.QueryRow(ctx, `SELECT `+invCols+` FROM invitations WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	return one(i, err, "invitation", id)
}

// InvitationByToken finds the invitation whose token hashes to tokenHash.
func (s *Store) InvitationByToken(ctx context.Context, tokenHash string) (accounts.Invitation, error) {
	i, err := scanInvitation(s.pool.QueryRow(ctx, `SELECT `+invCols+` FROM invitations WHERE token_hash = $1`, tokenHash))
	if errors.Is(err, pgx.ErrNoRows) {
		return i, accounts.ErrInvitationToken
	}
	if err != nil {
		return i, fmt.Errorf("read invitation: %w", err)
	}
	return i, nil
}

// Reissue sets a new token and expiry on a pending invitation.
func (s *Store) Reissue(ctx context.Context, id uuid.UUID, tokenHash string, expiresAt time.Time) (accounts.Invitation, error) {
	i, err := scanInvitation(s.pool.QueryRow(ctx, `UPDATE invitations SET token_hash = $2, expires_at = $3
		WHERE id = $1 AND status = 'pending' RETURNING `+invCols, id, tokenHash, expiresAt))
	if errors.Is(err, pgx.ErrNoRows) {
		return i, errs.Message(errs.Conflict, "invitations.closed", "Only a pending or expired invitation can be resent.", nil)
	}
	if err != nil {
		return i, fmt.Errorf("reissue invitation: %w", err)
	}
	return i, nil
}

// RevokeInvitation revokes a pending invitation.
func (s *Store) RevokeInvitation(ctx context.Context, id uuid.UUID) error {
	tag, err := s.pool.Exec(ctx, `UPDATE invitations SET status = 'revoked' WHERE id = $1 AND status = 'pending'`, id)
	if err != nil {
		return fmt.Errorf("revoke invitation: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return errs.Message(errs.Conflict, "invitations.closed", "Only a pending or expired invitation can be revoked.", nil)
	}
	return nil
}

// UserByEmail finds a user by email with their password hash.
func (s *Store) UserByEmail(ctx context.Context, email string) (*accounts.User, *string, error) {
	var u accounts.User
	var hash *string
	err := s.pool.QueryRow(ctx, `SELECT u.id, u.email, u.username, u.name, u.created_at,
		(SELECT password_hash FROM user_identities i WHERE i.user_id = u.id AND i.method = 'email:password'
			AND i.password_hash IS NOT NULL ORDER BY i.created_at LIMIT 1)
		FROM users u WHERE lower(u.email) = lower($1)`, email).Scan(&u.ID, &u.Email, &u.Username, &u.Name, &u.CreatedAt, &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("find user: %w", err)
	}
	return &u, hash, nil
}

// AcceptInvitation implements accounts.TeamStore.AcceptInvitation.
func (s *Store) AcceptInvitation(ctx context.Context, inv accounts.Invitation, userID uuid.UUID, newUser *accounts.User, id *accounts.Identity, now time.Time) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if newUser != nil {
			if err := insertUser(ctx, tx, *newUser, []accounts.Identity{*id}); err != nil {
				return err
			}
		}
		var status string
		err := tx.QueryRow(ctx, `UPDATE invitations SET status = 'accepted', accepted_by_id = $2, accepted_at = $3
			WHERE id = $1 AND status = 'pending' AND expires_at > $3 RETURNING status`, inv.ID, userID, now).Scan(&status)
		if errors.Is(err, pgx.ErrNoRows) {
			if err := tx.QueryRow(ctx, `SELECT status FROM invitations WHERE id = $1`, inv.ID).Scan(&status); err != nil || status != "accepted" {
				return accounts.ErrInvitationGone
			}
			return accounts.ErrInvitationUsed
		}
		if err != nil {
			return err
		}
		keepHigher := ` DO UPDATE SET role = EXCLUDED.role WHERE ` + fmt.Sprintf(rank, "EXCLUDED.role") + ` < ` + fmt.Sprintf(rank, "%s.role")
		if len(inv.ProjectIDs) == 0 {
			_, err := tx.Exec(ctx, `INSERT INTO workspace_memberships (id, workspace_id, user_id, role, created_at) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (workspace_id, user_id)`+fmt.Sprintf(keepHigher, "workspace_memberships"),
				uuid.Must(uuid.NewV7()), inv.WorkspaceID, userID, inv.Role, now)
			return err
		}
		for _, p := range inv.ProjectIDs {
			if _, err := tx.Exec(ctx, `INSERT INTO project_memberships (id, project_id, user_id, role, created_at)
				SELECT $1, p.id, $3, $4, $5 FROM projects p WHERE p.id = $2 AND p.workspace_id = $6
				ON CONFLICT (project_id, user_id)`+fmt.Sprintf(keepHigher, "project_memberships"),
				uuid.Must(uuid.NewV7()), p, userID, inv.Role, now, inv.WorkspaceID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && errs.KindOf(err) == errs.Internal {
		return mapWriteErr(err, "accept invitation", nil)
	}
	return err
}

func insertUser(ctx context.Context, tx pgx.Tx, u accounts.User, ids []accounts.Identity) error {
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO users (id, email, username, name, is_admin, is_root, metadata, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, u.ID, u.Email, u.Username, u.Name, u.IsAdmin, u.IsRoot, u.Metadata, u.CreatedAt)
	for _, id := range ids {
		b.Queue(`INSERT INTO user_identities (id, user_id, method, subject, email, password_hash, verified, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, id.ID, id.UserID, id.Method, id.Subject, id.Email, id.PasswordHash, id.Verified, id.CreatedAt)
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		var pe *pgconn.PgError
		if pgxutil.IsUniqueViolation(err) && errors.As(err, &pe) && pe.ConstraintName == "users_email_key" {
			return accounts.ErrEmailTaken(u.Email)
		}
		return mapWriteErr(err, "insert user", nil)
	}
	return nil
}

// CreateUser inserts a user with identities.
func (s *Store) CreateUser(ctx context.Context, u accounts.User, ids []accounts.Identity) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return insertUser(ctx, tx, u, ids) })
}

// CreateMembership inserts one membership; an existing one is a 409.
func (s *Store) CreateMembership(ctx context.Context, lv accounts.Level, m accounts.Membership) error {
	b := &pgx.Batch{}
	queueMembership(b, lv, m)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return mapWriteErr(err, "create membership", nil)
	}
	return nil
}

// DeleteMembership deletes one membership by id and revokes the member's
// keys below its target; the organization owner's is refused.
func (s *Store) DeleteMembership(ctx context.Context, lv accounts.Level, id uuid.UUID) ([]string, bool, error) {
	l := levels[lv]
	var prefixes []string
	var found bool
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var target, user uuid.UUID
		err := tx.QueryRow(ctx, `DELETE FROM `+l.memberships+` WHERE id = $1 RETURNING `+l.col+`, user_id`, id).Scan(&target, &user)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		if lv == accounts.OrganizationLevel {
			var owner bool
			if err := tx.QueryRow(ctx, `SELECT owner_user_id = $2 FROM organizations WHERE id = $1`, target, user).Scan(&owner); err != nil {
				return err
			}
			if owner {
				return accounts.ErrOwnerMembership
			}
		}
		prefixes, err = revokeKeys(ctx, tx, lv, target, user)
		return err
	})
	if err != nil && errs.KindOf(err) == errs.Internal {
		return nil, false, fmt.Errorf("delete membership: %w", err)
	}
	return prefixes, found, err
}

// RevokeKeyByID revokes an active key whatever its project.
func (s *Store) RevokeKeyByID(ctx context.Context, id uuid.UUID) (string, error) {
	var prefix string
	err := s.pool.QueryRow(ctx, `UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING prefix`, id).Scan(&prefix)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("revoke key: %w", err)
	}
	return prefix, nil
}

// UserExists reports whether the user exists.
func (s *Store) UserExists(ctx context.Context, id uuid.UUID) (bool, error) {
	var ok bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE id = $1)`, id).Scan(&ok); err != nil {
		return false, fmt.Errorf("find user: %w", err)
	}
	return ok, nil
}
