package accounts

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/apikey"
	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/roles"
)

// Purger removes every row, span and stream state of the given projects in
// every service's store (registry, tracing, NATS). The gateway calls it
// before it deletes a project's own rows, so a failed purge leaves the
// project in place to be deleted again; implementations must therefore be
// idempotent and accept ids of projects that hold nothing.
type Purger interface {
	PurgeProjects(ctx context.Context, projectIDs []uuid.UUID) error
}

// Level is where a membership applies: an organization, a workspace or a
// project.
type Level int

// The three membership levels.
const (
	OrganizationLevel Level = iota
	WorkspaceLevel
	ProjectLevel
)

func (l Level) String() string {
	return [...]string{"organization", "workspace", "project"}[l]
}

// Caller is who calls a team route: the user, and the role their
// credential is capped at (an API key carries at most its own role; ""
// for a signed-in user, who acts with their full rights).
type Caller struct {
	UserID uuid.UUID
	Cap    roles.Role
}

func (c Caller) capped(r roles.Role) roles.Role {
	if c.Cap == "" || r == "" {
		return r
	}
	return roles.Min(r, c.Cap)
}

// Access is a user's standing on an organization, workspace or project.
// Role is "" when the user is not a member of it; Exists is false when it
// does not exist.
type Access struct {
	Exists         bool
	Role           roles.Role
	OrganizationID uuid.UUID
	WorkspaceID    uuid.UUID // workspace and project levels
	OwnerUserID    uuid.UUID // the organization's owner
}

// Member is a membership with its user.
type Member struct {
	ID        uuid.UUID // the membership's id
	TargetID  uuid.UUID
	UserID    uuid.UUID
	Email     string
	Username  *string
	Name      *string
	Role      string
	CreatedAt time.Time
}

// Invitation statuses; "expired" is derived, never stored.
const (
	InvitationPending  = "pending"
	InvitationAccepted = "accepted"
	InvitationRevoked  = "revoked"
	InvitationExpired  = "expired"
)

// Invitation is an invitation to a workspace, narrowed to ProjectIDs when
// that list is not empty. Only the hash of its token is kept.
type Invitation struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	WorkspaceID    uuid.UUID
	Email          string
	Role           roles.Role
	ProjectIDs     []uuid.UUID
	TokenHash      string
	Status         string
	InvitedByID    *uuid.UUID
	CreatedAt      time.Time
	ExpiresAt      time.Time
	AcceptedAt     *time.Time
}

// State is the status as a client sees it: a pending invitation past its
// expiry is "expired".
func (i Invitation) State(now time.Time) string {
	if i.Status == InvitationPending && !now.Before(i.ExpiresAt) {
		return InvitationExpired
	}
	return i.Status
}

// OrgChange, WorkspaceChange and ProjectChange are the fields an update
// sets; nil fields keep their value.
type (
	OrgChange struct {
		Name        *string `json:"name,omitempty"`
		Slug        *string `json:"slug,omitempty"`
		Description *string `json:"description,omitempty"`
		// Flags sets the given flags (the keys of DefaultOrgFlags) and
		// keeps the others.
		Flags map[string]bool `json:"flags,omitempty"`
	}
	EntityChange struct {
		Name        *string `json:"name,omitempty"`
		Description *string `json:"description,omitempty"`
	}
)

// TeamStore is the persistence of organizations, workspaces, projects,
// memberships and invitations. Each method is one transaction. Methods that
// delete or revoke keys return the prefixes of those keys, so the caller
// can drop them from this replica's verifier cache at once.
type TeamStore interface {
	// Access resolves the user's role on the target at the level: the
	// organization's owner is owner everywhere in it; otherwise the most
	// specific membership wins (project, workspace, organization), and a
	// user linked to the organization only through a lower membership is
	// a viewer of the levels above it.
	Access(ctx context.Context, level Level, targetID, userID uuid.UUID) (Access, error)

	CreateOrganization(ctx context.Context, o Organization, w *Workspace, p *Project, ms []Membership) error
	Organization(ctx context.Context, id uuid.UUID) (Organization, error)
	// Organizations lists the organizations the user is linked to, with the
	// user's role (see Access), oldest first.
	Organizations(ctx context.Context, userID uuid.UUID) ([]OrganizationRole, error)
	UpdateOrganization(ctx context.Context, id uuid.UUID, ch OrgChange) (Organization, error)
	// ProjectIDs lists the projects under the target (an organization, a
	// workspace, or the project itself when it exists).
	ProjectIDs(ctx context.Context, level Level, targetID uuid.UUID) ([]uuid.UUID, error)
	// Delete removes the organization, workspace or project and everything
	// below it; false when it did not exist.
	Delete(ctx context.Context, level Level, id uuid.UUID) (prefixes []string, found bool, err error)
	// TransferOwnership makes to the organization's owner (its membership
	// role becomes owner) and from an admin; ErrNotOrgMember when to has
	// no organization membership.
	TransferOwnership(ctx context.Context, orgID, from, to uuid.UUID) error

	CreateWorkspace(ctx context.Context, w Workspace) error
	Workspace(ctx context.Context, id uuid.UUID) (Workspace, error)
	Workspaces(ctx context.Context, userID uuid.UUID) ([]WorkspaceRole, error)
	UpdateWorkspace(ctx context.Context, id uuid.UUID, ch EntityChange) (Workspace, error)

	CreateProject(ctx context.Context, p Project) error
	Project(ctx context.Context, id uuid.UUID) (Project, error)
	// Projects lists every project the user has a role in, with that role.
	Projects(ctx context.Context, userID uuid.UUID) ([]ProjectRole, error)
	UpdateProject(ctx context.Context, id uuid.UUID, ch EntityChange) (Project, error)

	Members(ctx context.Context, level Level, targetID uuid.UUID) ([]Member, error)
	// Member returns the user's membership at exactly this level; nil if none.
	Member(ctx context.Context, level Level, targetID, userID uuid.UUID) (*Member, error)
	// SetMember creates the membership or changes its role.
	SetMember(ctx context.Context, level Level, m Membership) (Member, error)
	// RemoveMember deletes the user's membership at the level and every
	// membership of the user below it, and revokes the user's keys in the
	// projects below it.
	RemoveMember(ctx context.Context, level Level, targetID, userID uuid.UUID) (prefixes []string, found bool, err error)

	UpdateUser(ctx context.Context, id uuid.UUID, username, name *string) error
	// SharedOrganizations lists the organizations the user owns in which
	// someone else holds a membership.
	SharedOrganizations(ctx context.Context, userID uuid.UUID) ([]uuid.UUID, error)
	// OwnedProjectIDs lists the projects of the organizations the users own.
	OwnedProjectIDs(ctx context.Context, refs []UserRef) ([]uuid.UUID, error)

	CreateInvitation(ctx context.Context, inv Invitation) error
	Invitations(ctx context.Context, workspaceID uuid.UUID) ([]Invitation, error)
	Invitation(ctx context.Context, workspaceID, id uuid.UUID) (Invitation, error)
	InvitationByToken(ctx context.Context, tokenHash string) (Invitation, error)
	// Reissue gives a pending or expired invitation a new token and expiry.
	Reissue(ctx context.Context, id uuid.UUID, tokenHash string, expiresAt time.Time) (Invitation, error)
	RevokeInvitation(ctx context.Context, id uuid.UUID) error
	// UserByEmail returns the user and their email:password hash (nil if
	// none); a nil user when the email is unknown.
	UserByEmail(ctx context.Context, email string) (*User, *string, error)
	// AcceptInvitation marks the invitation accepted (if it is still
	// pending, else ErrInvitationUsed) and gives the user the invited role
	// in the workspace, or in each of its projects still listed; an
	// existing membership keeps its role when that role is higher. newUser,
	// when not nil, is created first with its identity.
	AcceptInvitation(ctx context.Context, inv Invitation, userID uuid.UUID, newUser *User, identity *Identity, now time.Time) error

	CreateUser(ctx context.Context, u User, ids []Identity) error
	CreateMembership(ctx context.Context, level Level, m Membership) error
	// DeleteMembership deletes a membership by id and revokes the member's
	// keys as RemoveMember does; ErrOwnerMembership for the owner's
	// organization membership.
	DeleteMembership(ctx context.Context, level Level, id uuid.UUID) (prefixes []string, found bool, err error)
	// RevokeKeyByID revokes any key; "" when there is no such active key.
	RevokeKeyByID(ctx context.Context, id uuid.UUID) (string, error)
	// UserExists reports whether the user exists.
	UserExists(ctx context.Context, id uuid.UUID) (bool, error)
	// AddIdentities inserts identities of existing users, all or none.
	AddIdentities(ctx context.Context, ids []Identity) error
	// DeleteIdentity deletes one identity; false when there was none.
	DeleteIdentity(ctx context.Context, id uuid.UUID) (bool, error)
}

// ErrNotFound is the 404 of a team route: the target does not exist or the
// caller is not a member of it (the two are not told apart, so a caller
// learns nothing about other organizations).
func ErrNotFound(kind string, id uuid.UUID) error {
	return errs.Message(errs.NotFound, "accounts.not_found", fmt.Sprintf("No %s with id %s.", kind, id),
		map[string]any{kind + "_id": id.String()})
}

// Errors of the team use cases.
var (
	ErrNotOrgMember = errs.Message(errs.Conflict, "accounts.not_member",
		"The new owner must be a member of the organization.", nil)
	ErrOwnerMembership = errs.Message(errs.Conflict, "accounts.last_owner",
		"This user owns the organization: transfer the ownership before removing or demoting them.", nil)
	ErrInvitationUsed = errs.Message(errs.Conflict, "invitations.used",
		"This invitation was already accepted.", nil)
	ErrInvitationGone = errs.Message(errs.Gone, "invitations.expired",
		"This invitation has expired or was revoked; ask for a new one.", nil)
	ErrInvitationToken = errs.Message(errs.NotFound, "invitations.unknown",
		"No invitation has this token.", nil)
	ErrSoleOwner = errs.Message(errs.Conflict, "profile.owns_shared_organization",
		"You own an organization that has other members: transfer its ownership or remove them first.", nil)
)

var slugRe = regexp.MustCompile(`^[a-zA-Z0-9_\-][a-zA-Z0-9_.\-]*$`)

// checkText checks an optional text field against its limit; required
// means it must be present and not blank.
func checkText(field string, v *string, max int, required bool) error {
	if v == nil {
		if required {
			return invalid(field, "is required")
		}
		return nil
	}
	if required && strings.TrimSpace(*v) == "" {
		return invalid(field, "must not be blank")
	}
	if utf8.RuneCountInString(*v) > max {
		return invalid(field, fmt.Sprintf("must be at most %d characters", max))
	}
	return nil
}

func checkSlug(field string, v *string) error {
	if err := checkText(field, v, MaxSlug, false); err != nil {
		return err
	}
	if v != nil && !slugRe.MatchString(*v) {
		return invalid(field, fmt.Sprintf("'%s' must be URL-safe (letters, digits, '_', '-', '.')", *v))
	}
	return nil
}

func parseRole(field, s string) (roles.Role, error) {
	r, err := roles.Parse(s)
	if err != nil {
		return "", invalid(field, err.Error())
	}
	return r, nil
}

// access resolves the caller's capped role on the target; a target that
// does not exist, or whose caller has no role in it, is a 404.
func (s *Service) access(ctx context.Context, c Caller, level Level, id uuid.UUID) (Access, error) {
	a, err := s.store.Access(ctx, level, id, c.UserID)
	if err != nil {
		return Access{}, err
	}
	if !a.Exists || a.Role == "" {
		return Access{}, ErrNotFound(level.String(), id)
	}
	a.Role = c.capped(a.Role)
	return a, nil
}

// authorize is access plus the permission check (roles.Denied).
func (s *Service) authorize(ctx context.Context, c Caller, level Level, id uuid.UUID, p roles.Permission) (Access, error) {
	a, err := s.access(ctx, c, level, id)
	if err != nil {
		return Access{}, err
	}
	if !a.Role.Can(p) {
		return Access{}, roles.Denied(a.Role, p)
	}
	return a, nil
}

func (s *Service) forget(prefixes []string) {
	for _, p := range prefixes {
		s.keys.Forget(p)
	}
}

// rolesChanged drops every cached key of this replica: a membership, role
// or ownership change may change what any key of the user may do (the
// verifier caps a key by its creator's current role). Other replicas flush
// on the database's NOTIFY.
func (s *Service) rolesChanged() { s.keys.Forget(apikey.FlushAll) }

func (s *Service) stamp() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// CreateOrganization creates an organization owned by the caller, with a
// Default workspace and project and owner memberships on all three.
func (s *Service) CreateOrganization(ctx context.Context, c Caller, name string, slug, description *string) (Organization, error) {
	if err := checkText("name", &name, MaxName, true); err != nil {
		return Organization{}, err
	}
	if err := checkSlug("slug", slug); err != nil {
		return Organization{}, err
	}
	if err := checkText("description", description, MaxText, false); err != nil {
		return Organization{}, err
	}
	now := s.stamp()
	o := Organization{ID: newID(), Name: name, Slug: slug, Description: description, OwnerUserID: c.UserID, CreatedAt: now}
	w := Workspace{ID: newID(), OrganizationID: o.ID, Name: "Default", CreatedAt: now}
	p := Project{ID: newID(), OrganizationID: o.ID, WorkspaceID: w.ID, Name: "Default", IsDefault: true, CreatedAt: now}
	ms := []Membership{
		{ID: newID(), TargetID: o.ID, UserID: c.UserID, Role: string(roles.Owner), CreatedAt: now},
		{ID: newID(), TargetID: w.ID, UserID: c.UserID, Role: string(roles.Owner), CreatedAt: now},
		{ID: newID(), TargetID: p.ID, UserID: c.UserID, Role: string(roles.Owner), CreatedAt: now},
	}
	if err := s.store.CreateOrganization(ctx, o, &w, &p, ms); err != nil {
		return Organization{}, err
	}
	if err := s.seed(ctx, OrganizationLevel, o.ID, p.ID, c.UserID); err != nil {
		return Organization{}, err
	}
	return o, nil
}

// seed fills a new project with the registry's defaults; on failure the
// new entity (level, id) is purged and deleted again, so the caller sees
// all or nothing.
func (s *Service) seed(ctx context.Context, level Level, id, projectID, userID uuid.UUID) error {
	if s.seeder == nil {
		return nil
	}
	err := s.seeder.SeedProject(ctx, projectID, userID)
	if err == nil {
		return nil
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if derr := s.deleteEntity(cctx, level, id); derr != nil {
		return fmt.Errorf("seed defaults: %w; undo %s: %w", err, level, derr)
	}
	e := errs.Message(errs.Unavailable, "accounts.seed_failed",
		"The registry could not seed the default environments and evaluators; nothing was created. Retry later.", nil)
	e.Err = err
	return e
}

// deleteEntity purges the projects under the target in every service,
// then deletes the gateway's rows. A project created under the target
// while the purge ran is purged after the delete.
func (s *Service) deleteEntity(ctx context.Context, level Level, id uuid.UUID) error {
	ids, err := s.store.ProjectIDs(ctx, level, id)
	if err != nil {
		return err
	}
	if err := s.purge(ctx, ids); err != nil {
		return err
	}
	prefixes, found, err := s.store.Delete(ctx, level, id)
	s.forget(prefixes)
	s.rolesChanged()
	if err != nil {
		return err
	}
	if !found {
		return ErrNotFound(level.String(), id)
	}
	return nil
}

func (s *Service) purge(ctx context.Context, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	if err := s.purger.PurgeProjects(ctx, ids); err != nil {
		e := errs.Message(errs.Unavailable, "accounts.purge_failed",
			"The services could not delete the projects' data; nothing was deleted. Retry later.", nil)
		e.Err = err
		return e
	}
	return nil
}

// Organization returns an organization the caller is a member of, with
// the caller's role.
func (s *Service) Organization(ctx context.Context, c Caller, id uuid.UUID) (OrganizationRole, error) {
	a, err := s.access(ctx, c, OrganizationLevel, id)
	if err != nil {
		return OrganizationRole{}, err
	}
	o, err := s.store.Organization(ctx, id)
	return OrganizationRole{Organization: o, Role: string(a.Role)}, err
}

// Organizations lists the caller's organizations.
func (s *Service) Organizations(ctx context.Context, c Caller) ([]OrganizationRole, error) {
	list, err := s.store.Organizations(ctx, c.UserID)
	for i := range list {
		list[i].Role = string(c.capped(roles.Role(list[i].Role)))
	}
	return list, err
}

// UpdateOrganization renames or re-describes an organization
// (manage_members); an update without any field is a 400.
func (s *Service) UpdateOrganization(ctx context.Context, c Caller, id uuid.UUID, ch OrgChange) (Organization, error) {
	if ch.Name == nil && ch.Slug == nil && ch.Description == nil && ch.Flags == nil {
		return Organization{}, invalid("organization", "give at least one of name, slug, description, flags")
	}
	if err := checkOrgFlags(ch.Flags); err != nil {
		return Organization{}, err
	}
	if err := checkText("name", ch.Name, MaxName, ch.Name != nil); err != nil {
		return Organization{}, err
	}
	if err := checkSlug("slug", ch.Slug); err != nil {
		return Organization{}, err
	}
	if err := checkText("description", ch.Description, MaxText, false); err != nil {
		return Organization{}, err
	}
	if _, err := s.authorize(ctx, c, OrganizationLevel, id, roles.ManageMembers); err != nil {
		return Organization{}, err
	}
	return s.store.UpdateOrganization(ctx, id, ch)
}

// DeleteOrganization deletes an organization (own): its projects' data in
// every service first, then its rows.
func (s *Service) DeleteOrganization(ctx context.Context, c Caller, id uuid.UUID) error {
	if _, err := s.authorize(ctx, c, OrganizationLevel, id, roles.Own); err != nil {
		return err
	}
	return s.deleteEntity(ctx, OrganizationLevel, id)
}

// TransferOwnership hands the organization to another of its members
// (own); the previous owner stays an admin.
func (s *Service) TransferOwnership(ctx context.Context, c Caller, id, to uuid.UUID) error {
	a, err := s.authorize(ctx, c, OrganizationLevel, id, roles.Own)
	if err != nil {
		return err
	}
	if to == a.OwnerUserID {
		return nil
	}
	defer s.rolesChanged()
	return s.store.TransferOwnership(ctx, id, a.OwnerUserID, to)
}

// CreateWorkspace adds a workspace to an organization (manage_members on
// the organization).
func (s *Service) CreateWorkspace(ctx context.Context, c Caller, orgID uuid.UUID, name string, description *string) (Workspace, error) {
	if err := checkText("name", &name, MaxName, true); err != nil {
		return Workspace{}, err
	}
	if err := checkText("description", description, MaxText, false); err != nil {
		return Workspace{}, err
	}
	if _, err := s.authorize(ctx, c, OrganizationLevel, orgID, roles.ManageMembers); err != nil {
		return Workspace{}, err
	}
	w := Workspace{ID: newID(), OrganizationID: orgID, Name: name, Description: description, CreatedAt: s.stamp()}
	return w, s.store.CreateWorkspace(ctx, w)
}

// Workspace returns a workspace the caller has a role in.
func (s *Service) Workspace(ctx context.Context, c Caller, id uuid.UUID) (WorkspaceRole, error) {
	a, err := s.access(ctx, c, WorkspaceLevel, id)
	if err != nil {
		return WorkspaceRole{}, err
	}
	w, err := s.store.Workspace(ctx, id)
	return WorkspaceRole{Workspace: w, Role: string(a.Role)}, err
}

// Workspaces lists the workspaces the caller has a role in.
func (s *Service) Workspaces(ctx context.Context, c Caller) ([]WorkspaceRole, error) {
	list, err := s.store.Workspaces(ctx, c.UserID)
	for i := range list {
		list[i].Role = string(c.capped(roles.Role(list[i].Role)))
	}
	return list, err
}

// UpdateWorkspace renames a workspace (manage_members on it).
func (s *Service) UpdateWorkspace(ctx context.Context, c Caller, id uuid.UUID, ch EntityChange) (Workspace, error) {
	if err := checkChange("workspace", ch); err != nil {
		return Workspace{}, err
	}
	if _, err := s.authorize(ctx, c, WorkspaceLevel, id, roles.ManageMembers); err != nil {
		return Workspace{}, err
	}
	return s.store.UpdateWorkspace(ctx, id, ch)
}

func checkChange(kind string, ch EntityChange) error {
	if ch.Name == nil && ch.Description == nil {
		return invalid(kind, "give at least one of name, description")
	}
	if err := checkText("name", ch.Name, MaxName, ch.Name != nil); err != nil {
		return err
	}
	return checkText("description", ch.Description, MaxText, false)
}

// DeleteWorkspace deletes a workspace with its projects (manage_members
// on the organization: a workspace admin cannot delete what holds others'
// work above their reach).
func (s *Service) DeleteWorkspace(ctx context.Context, c Caller, id uuid.UUID) error {
	a, err := s.access(ctx, c, WorkspaceLevel, id)
	if err != nil {
		return err
	}
	if _, err := s.authorize(ctx, c, OrganizationLevel, a.OrganizationID, roles.ManageMembers); err != nil {
		return err
	}
	return s.deleteEntity(ctx, WorkspaceLevel, id)
}

// CreateProject adds a project to a workspace (manage_members on the
// workspace) and seeds its defaults.
func (s *Service) CreateProject(ctx context.Context, c Caller, workspaceID uuid.UUID, name string, description *string) (Project, error) {
	if err := checkText("name", &name, MaxName, true); err != nil {
		return Project{}, err
	}
	if err := checkText("description", description, MaxText, false); err != nil {
		return Project{}, err
	}
	a, err := s.authorize(ctx, c, WorkspaceLevel, workspaceID, roles.ManageMembers)
	if err != nil {
		return Project{}, err
	}
	p := Project{ID: newID(), OrganizationID: a.OrganizationID, WorkspaceID: workspaceID, Name: name, Description: description, CreatedAt: s.stamp()}
	if err := s.store.CreateProject(ctx, p); err != nil {
		return Project{}, err
	}
	return p, s.seed(ctx, ProjectLevel, p.ID, p.ID, c.UserID)
}

// Project returns a project the caller has a role in.
func (s *Service) Project(ctx context.Context, c Caller, id uuid.UUID) (ProjectRole, error) {
	a, err := s.access(ctx, c, ProjectLevel, id)
	if err != nil {
		return ProjectRole{}, err
	}
	p, err := s.store.Project(ctx, id)
	return ProjectRole{Project: p, Role: string(a.Role)}, err
}

// CurrentProject is a project with the names of its workspace and
// organization and the caller's role in it: what the compatible SDK reads
// from GET /projects/current to build its evaluation and trace URLs.
type CurrentProject struct {
	ProjectRole
	WorkspaceName, OrganizationName string
}

// Current returns the project a credential acts in (an API key's own, a
// session's chosen one) for a caller with a role in it. The names come
// from the rows directly: a project member need not be a member of the
// workspace or organization above it to see what the project is part of.
func (s *Service) Current(ctx context.Context, c Caller, projectID uuid.UUID) (CurrentProject, error) {
	p, err := s.Project(ctx, c, projectID)
	if err != nil {
		return CurrentProject{}, err
	}
	w, err := s.store.Workspace(ctx, p.WorkspaceID)
	if err != nil {
		return CurrentProject{}, err
	}
	o, err := s.store.Organization(ctx, p.OrganizationID)
	if err != nil {
		return CurrentProject{}, err
	}
	return CurrentProject{ProjectRole: p, WorkspaceName: w.Name, OrganizationName: o.Name}, nil
}

// Projects lists the projects the caller has a role in.
func (s *Service) Projects(ctx context.Context, c Caller) ([]ProjectRole, error) {
	list, err := s.store.Projects(ctx, c.UserID)
	for i := range list {
		list[i].Role = string(c.capped(roles.Role(list[i].Role)))
	}
	return list, err
}

// UpdateProject renames a project (manage_members on it).
func (s *Service) UpdateProject(ctx context.Context, c Caller, id uuid.UUID, ch EntityChange) (Project, error) {
	if err := checkChange("project", ch); err != nil {
		return Project{}, err
	}
	if _, err := s.authorize(ctx, c, ProjectLevel, id, roles.ManageMembers); err != nil {
		return Project{}, err
	}
	return s.store.UpdateProject(ctx, id, ch)
}

// DeleteProject deletes a project and its data everywhere (manage_members
// on its workspace).
func (s *Service) DeleteProject(ctx context.Context, c Caller, id uuid.UUID) error {
	a, err := s.access(ctx, c, ProjectLevel, id)
	if err != nil {
		return err
	}
	if _, err := s.authorize(ctx, c, WorkspaceLevel, a.WorkspaceID, roles.ManageMembers); err != nil {
		return err
	}
	return s.deleteEntity(ctx, ProjectLevel, id)
}

// Members lists the memberships at exactly this level (read).
func (s *Service) Members(ctx context.Context, c Caller, level Level, id uuid.UUID) ([]Member, error) {
	if _, err := s.authorize(ctx, c, level, id, roles.Read); err != nil {
		return nil, err
	}
	return s.store.Members(ctx, level, id)
}

// SetMemberRole gives a user a role at the level (manage_members). An
// organization role goes only to an existing member of the organization;
// a workspace or project role to anyone linked to the organization. The
// caller can neither grant a role above their own nor change the role of
// someone above them; the organization's owner keeps the owner role.
func (s *Service) SetMemberRole(ctx context.Context, c Caller, level Level, id, userID uuid.UUID, role string) (Member, error) {
	r, err := parseRole("role", role)
	if err != nil {
		return Member{}, err
	}
	a, err := s.authorize(ctx, c, level, id, roles.ManageMembers)
	if err != nil {
		return Member{}, err
	}
	if !a.Role.AtLeast(r) {
		return Member{}, roles.Denied(a.Role, roles.Own)
	}
	cur, err := s.store.Member(ctx, level, id, userID)
	if err != nil {
		return Member{}, err
	}
	if cur != nil && !a.Role.AtLeast(roles.Role(cur.Role)) {
		return Member{}, roles.Denied(a.Role, roles.Own)
	}
	if level == OrganizationLevel && userID == a.OwnerUserID && r != roles.Owner {
		return Member{}, ErrOwnerMembership
	}
	if cur == nil {
		linked, err := s.store.Access(ctx, OrganizationLevel, a.OrganizationID, userID)
		if err != nil {
			return Member{}, err
		}
		if level == OrganizationLevel || linked.Role == "" {
			return Member{}, errs.Message(errs.NotFound, "accounts.not_member",
				fmt.Sprintf("User %s is not a member of the organization; invite them first.", userID),
				map[string]any{"user_id": userID.String()})
		}
	}
	m := Membership{ID: newID(), TargetID: id, UserID: userID, Role: string(r), CreatedAt: s.stamp()}
	defer s.rolesChanged()
	return s.store.SetMember(ctx, level, m)
}

// RemoveMember removes a user from the level and everything below it and
// revokes their keys there (manage_members, or the user leaving). Nobody
// removes someone above their own role, and the organization's owner
// cannot be removed (409): ownership must be transferred first.
func (s *Service) RemoveMember(ctx context.Context, c Caller, level Level, id, userID uuid.UUID) error {
	a, err := s.access(ctx, c, level, id)
	if err != nil {
		return err
	}
	if userID != c.UserID {
		if !a.Role.Can(roles.ManageMembers) {
			return roles.Denied(a.Role, roles.ManageMembers)
		}
		cur, err := s.store.Member(ctx, level, id, userID)
		if err != nil {
			return err
		}
		if cur != nil && !a.Role.AtLeast(roles.Role(cur.Role)) {
			return roles.Denied(a.Role, roles.Own)
		}
	}
	if level == OrganizationLevel && userID == a.OwnerUserID {
		return ErrOwnerMembership
	}
	prefixes, found, err := s.store.RemoveMember(ctx, level, id, userID)
	s.forget(prefixes)
	s.rolesChanged()
	if err != nil {
		return err
	}
	if !found {
		return errs.Message(errs.NotFound, "accounts.not_member",
			fmt.Sprintf("User %s has no membership in this %s.", userID, level), map[string]any{"user_id": userID.String()})
	}
	return nil
}

// UpdateProfile changes the caller's username or name; 400 without either.
func (s *Service) UpdateProfile(ctx context.Context, c Caller, username, name *string) (*Profile, error) {
	if username == nil && name == nil {
		return nil, invalid("profile", "give at least one of username, name")
	}
	if err := checkText("username", username, MaxName, false); err != nil {
		return nil, err
	}
	if err := checkText("name", name, MaxName, false); err != nil {
		return nil, err
	}
	if c.UserID == uuid.Nil {
		return nil, ErrNoProfile
	}
	if err := s.store.UpdateUser(ctx, c.UserID, username, name); err != nil {
		return nil, err
	}
	return s.Profile(ctx, c.UserID)
}

// DeleteProfile deletes the caller with the organizations they own; 409
// while one of those has other members (see ErrSoleOwner).
func (s *Service) DeleteProfile(ctx context.Context, c Caller) error {
	if c.UserID == uuid.Nil {
		return ErrNoProfile
	}
	if c.Cap != "" && !c.Cap.Can(roles.Own) {
		return roles.Denied(c.Cap, roles.Own)
	}
	shared, err := s.store.SharedOrganizations(ctx, c.UserID)
	if err != nil {
		return err
	}
	if len(shared) > 0 {
		return ErrSoleOwner
	}
	return s.deleteUsers(ctx, []UserRef{{ID: &c.UserID}})
}

// deleteUsers purges the projects of the organizations the users own, then
// deletes the users with those organizations.
func (s *Service) deleteUsers(ctx context.Context, refs []UserRef) error {
	ids, err := s.store.OwnedProjectIDs(ctx, refs)
	if err != nil {
		return err
	}
	if err := s.purge(ctx, ids); err != nil {
		return err
	}
	prefixes, err := s.store.DeleteUsers(ctx, refs)
	s.forget(prefixes)
	s.rolesChanged()
	return err
}
