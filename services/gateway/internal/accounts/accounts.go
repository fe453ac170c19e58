// Package accounts provisions users with their organization, workspace,
// project, memberships and first API key, and manages a project's API keys.
package accounts

import (
	"context"
	"encoding/json"
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/assayhq/assay/pkg/apikey"
	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/roles"
)

// Options are the provisioning switches of the compatible platform's admin API. A nil
// field takes its default.
type Options struct {
	DryRun           *bool   `json:"dry_run,omitempty"`
	IdempotencyKey   *string `json:"idempotency_key,omitempty"`
	CreateIdentities *bool   `json:"create_identities,omitempty"`
	CreateAPIKeys    *bool   `json:"create_api_keys,omitempty"`
	ReturnAPIKeys    *bool   `json:"return_api_keys,omitempty"`
	SeedDefaults     *bool   `json:"seed_defaults,omitempty"`
	Reason           *string `json:"reason,omitempty"`
}

func on(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// UserSpec describes the user to create.
type UserSpec struct {
	Email    string         `json:"email"`
	Username *string        `json:"username,omitempty"`
	Name     *string        `json:"name,omitempty"`
	IsAdmin  *bool          `json:"is_admin,omitempty"`
	IsRoot   *bool          `json:"is_root,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// NamedSpec overrides the name of the organization, workspace or project.
type NamedSpec struct {
	Name        *string `json:"name,omitempty"`
	Slug        *string `json:"slug,omitempty"`
	Description *string `json:"description,omitempty"`
}

// IdentitySpec is a login identity (email:password or email:otp).
type IdentitySpec struct {
	Method   string  `json:"method"`
	Subject  string  `json:"subject"`
	Email    *string `json:"email,omitempty"`
	Password *string `json:"password,omitempty"`
	Verified *bool   `json:"verified,omitempty"`
}

// Spec is one account of a provisioning request.
type Spec struct {
	User           UserSpec       `json:"user"`
	Options        *Options       `json:"options,omitempty"`
	Organization   *NamedSpec     `json:"organization,omitempty"`
	Workspace      *NamedSpec     `json:"workspace,omitempty"`
	Project        *NamedSpec     `json:"project,omitempty"`
	UserIdentities []IdentitySpec `json:"user_identities,omitempty"`
}

// User, Organization, ... are the created records.
type (
	User struct {
		ID        uuid.UUID
		Email     string
		Username  *string
		Name      *string
		IsAdmin   bool
		IsRoot    bool
		Metadata  map[string]any
		CreatedAt time.Time
	}
	Organization struct {
		ID          uuid.UUID
		Name        string
		Slug        *string
		Description *string
		OwnerUserID uuid.UUID
		CreatedAt   time.Time
		// Flags are the flags a client set (OrgFlags); unset ones read
		// as DefaultOrgFlags.
		Flags map[string]bool
	}
	Workspace struct {
		ID             uuid.UUID
		OrganizationID uuid.UUID
		Name           string
		Description    *string
		CreatedAt      time.Time
	}
	Project struct {
		ID             uuid.UUID
		OrganizationID uuid.UUID
		WorkspaceID    uuid.UUID
		Name           string
		Description    *string
		IsDefault      bool
		CreatedAt      time.Time
	}
	// Membership links the user to the organization, workspace or project
	// named by TargetID.
	Membership struct {
		ID        uuid.UUID
		TargetID  uuid.UUID
		UserID    uuid.UUID
		Role      string
		CreatedAt time.Time
	}
	Identity struct {
		ID           uuid.UUID
		UserID       uuid.UUID
		Method       string
		Subject      string
		Email        *string
		PasswordHash *string
		Verified     bool
		CreatedAt    time.Time
	}
)

// Account is everything one provisioned account consists of.
type Account struct {
	User         User
	Organization Organization
	Workspace    Workspace
	Project      Project
	Memberships  [3]Membership // organization, workspace, project
	Identities   []Identity
	Key          *APIKey // nil when create_api_keys is false
	RawKey       string  // empty unless return_api_keys
	SeedDefaults bool
}

// Profile is a user and every membership that gives them access, oldest
// membership first in each list.
type Profile struct {
	User          User
	Organizations []OrganizationRole
	Workspaces    []WorkspaceRole
	Projects      []ProjectRole
}

// OrganizationRole, WorkspaceRole and ProjectRole are a membership's
// target with the member's role in it.
type (
	OrganizationRole struct {
		Organization
		Role string
	}
	WorkspaceRole struct {
		Workspace
		Role string
	}
	ProjectRole struct {
		Project
		Role string
	}
)

// UserRef selects a user to delete, by id or email.
type UserRef struct {
	ID    *uuid.UUID `json:"id,omitempty"`
	Email *string    `json:"email,omitempty"`
}

// APIKey is a stored key; the secret itself is never kept.
type APIKey struct {
	ID          uuid.UUID
	ProjectID   uuid.UUID
	Prefix      string
	SecretHash  string
	Name        *string
	CreatedByID *uuid.UUID
	CreatedAt   time.Time
	ExpiresAt   *time.Time
	// Role is the most the key may do; nil: its creator's role at use.
	// The verifier caps it by the creator's current role either way.
	Role *string
}

// Store persists accounts and keys. Each method is one transaction.
type Store interface {
	// CreateAccounts inserts all accounts or none. With commit false it rolls
	// back after the inserts (a dry run that still checks constraints).
	// A taken email is ErrEmailTaken.
	CreateAccounts(ctx context.Context, accounts []*Account, commit bool) error
	// DeleteUsers removes the users and the organizations they own, with
	// everything below them, revokes the keys the users made elsewhere, and
	// returns the prefixes of the keys that went or were revoked. Unknown
	// users are skipped.
	DeleteUsers(ctx context.Context, refs []UserRef) ([]string, error)
	// ProjectRole returns the user's effective role in the project: the
	// organization's owner is owner everywhere in it; otherwise the
	// project membership's role, else the workspace's, else the
	// organization's. "" when the user has none of them.
	ProjectRole(ctx context.Context, userID, projectID uuid.UUID) (roles.Role, error)
	// ProjectWorkspace returns the project's workspace, uuid.Nil if none.
	ProjectWorkspace(ctx context.Context, projectID uuid.UUID) (uuid.UUID, error)
	ListKeys(ctx context.Context, projectID uuid.UUID) ([]APIKey, error)
	CreateKey(ctx context.Context, k APIKey) error
	// RevokeKey marks a key of the project revoked and returns its prefix;
	// "" when the project has no such key.
	RevokeKey(ctx context.Context, projectID, id uuid.UUID) (string, error)
	// Profile reads a user and their memberships in one snapshot; nil when
	// there is no such user. Projects lists every project the user has a
	// role in (Store.ProjectRole), not only direct project memberships.
	Profile(ctx context.Context, userID uuid.UUID) (*Profile, error)
	TeamStore
	ResetStore
}

// Seeder creates a new project's default environments and evaluators. The
// registry owns those; the gateway's seeder package calls it over HTTP.
type Seeder interface {
	SeedProject(ctx context.Context, projectID, userID uuid.UUID) error
}

// Forgetter drops a key from this replica's verifier cache (apikey.Verifier);
// apikey.FlushAll drops every key, after a membership or role change.
// Other replicas learn of the change through the api_keys NOTIFY trigger a
// few milliseconds later; this replica must not wait for it.
type Forgetter interface {
	Forget(prefix string)
}

// Service implements provisioning and key management over a Store.
type Service struct {
	store  Store
	seeder Seeder
	keys   Forgetter
	purger Purger
	now    func() time.Time
	// InvitationTTL is how long an invitation's token is valid.
	InvitationTTL time.Duration
	// AcceptURL is the link sent with an invitation; the token is
	// appended to it.
	AcceptURL string
	// Mailer, when set, emails each invitation's link.
	Mailer Mailer
	// ResetURL is the link of a password reset; the token is appended.
	ResetURL string
	// ResetTTL is how long a password reset link works.
	ResetTTL time.Duration
}

// NewService returns a service; seeder may be nil, purger may not: every
// deletion of a project goes through it.
func NewService(store Store, keys Forgetter, seeder Seeder, purger Purger) *Service {
	if purger == nil {
		panic("accounts.NewService: a Purger is required")
	}
	return &Service{store: store, keys: keys, seeder: seeder, purger: purger, now: time.Now,
		InvitationTTL: 7 * 24 * time.Hour, AcceptURL: "/console/invitations/accept?token=",
		ResetURL: "/console/reset-password?token=", ResetTTL: time.Hour}
}

// ErrEmailTaken is returned by CreateAccounts for an existing email.
func ErrEmailTaken(email string) error {
	return errs.Message(errs.Conflict, "accounts.email_taken",
		fmt.Sprintf("User with email '%s' already exists.", email), map[string]any{"email": email})
}

func invalid(field, msg string) error {
	return errs.Message(errs.Invalid, "accounts.invalid", field+": "+msg, map[string]any{"field": field})
}

// Provision creates every account in specs (keyed by the caller's reference)
// in one transaction. Per-account options replace the top-level ones.
func (s *Service) Provision(ctx context.Context, top *Options, specs map[string]Spec) (map[string]*Account, error) {
	if len(specs) == 0 {
		return nil, invalid("accounts", "at least one account is required")
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	out := make(map[string]*Account, len(specs))
	list := make([]*Account, 0, len(specs))
	dryRun := true
	seen := map[string]string{}
	for ref, spec := range specs {
		opts := top
		if spec.Options != nil {
			opts = spec.Options
		}
		if opts == nil {
			opts = &Options{}
		}
		acc, err := build(ref, spec, opts, now)
		if err != nil {
			return nil, err
		}
		email := strings.ToLower(acc.User.Email)
		if other, dup := seen[email]; dup {
			return nil, invalid("accounts."+ref+".user.email", fmt.Sprintf("same email as account '%s'", other))
		}
		seen[email] = ref
		dryRun = dryRun && on(opts.DryRun, false)
		out[ref], list = acc, append(list, acc)
	}
	if err := s.store.CreateAccounts(ctx, list, !dryRun); err != nil {
		return nil, err
	}
	if dryRun {
		for _, a := range list {
			a.RawKey = "" // the rolled-back key would not work
		}
		return out, nil
	}
	for _, a := range list {
		if a.SeedDefaults && s.seeder != nil {
			if err := s.seeder.SeedProject(ctx, a.Project.ID, a.User.ID); err != nil {
				return nil, s.undo(list, err)
			}
		}
	}
	return out, nil
}

// undo deletes the accounts of a request whose seeding failed, so the
// caller sees all or nothing: an account without its default environments
// would break the first deploy. Seeding is idempotent, so a retry is safe.
func (s *Service) undo(list []*Account, cause error) error {
	refs := make([]UserRef, len(list))
	for i, a := range list {
		refs[i] = UserRef{ID: &a.User.ID}
	}
	// The request may be cancelled already; the cleanup must still run.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.deleteUsers(ctx, refs); err != nil {
		return fmt.Errorf("seed defaults: %w; undo accounts: %w", cause, err)
	}
	e := errs.Message(errs.Unavailable, "accounts.seed_failed",
		"The registry could not seed the default environments and evaluators; no account was created. Retry later.", nil)
	e.Err = cause
	return e
}

// Limits on the text an account stores, in characters (metadata: bytes of
// its JSON), checked before anything is written; docs/operations.md lists
// them. Emails and identity subjects are indexed, so their
// bound also keeps index rows under PostgreSQL's maximum.
const (
	MaxEmail    = 320
	MaxName     = 512 // user name and username; organization, workspace, project and API key names
	MaxSlug     = 255
	MaxText     = 65536 // descriptions
	MaxMetadata = 65536
)

// lengthCheck is one stored text value and its limit.
type lengthCheck struct {
	field string
	value *string
	max   int
}

// checkLengths applies the limits to one account of a provisioning
// request; field is "accounts.<ref>".
func checkLengths(field string, spec Spec) error {
	u := spec.User
	checks := []lengthCheck{{".user.email", &u.Email, MaxEmail}, {".user.name", u.Name, MaxName}, {".user.username", u.Username, MaxName}}
	for _, n := range []struct {
		key  string
		spec *NamedSpec
	}{{".organization", spec.Organization}, {".workspace", spec.Workspace}, {".project", spec.Project}} {
		if n.spec != nil {
			checks = append(checks, lengthCheck{n.key + ".name", n.spec.Name, MaxName},
				lengthCheck{n.key + ".slug", n.spec.Slug, MaxSlug}, lengthCheck{n.key + ".description", n.spec.Description, MaxText})
		}
	}
	for i, is := range spec.UserIdentities {
		at := fmt.Sprintf(".user_identities[%d]", i)
		checks = append(checks, lengthCheck{at + ".subject", &is.Subject, MaxEmail}, lengthCheck{at + ".email", is.Email, MaxEmail})
	}
	for _, c := range checks {
		if c.value != nil && utf8.RuneCountInString(*c.value) > c.max {
			return invalid(field+c.field, fmt.Sprintf("must be at most %d characters", c.max))
		}
	}
	if u.Metadata != nil {
		if b, _ := json.Marshal(u.Metadata); len(b) > MaxMetadata {
			return invalid(field+".user.metadata", fmt.Sprintf("must be at most %d bytes of JSON", MaxMetadata))
		}
	}
	return nil
}

func build(ref string, spec Spec, opts *Options, now time.Time) (*Account, error) {
	field := "accounts." + ref
	if err := checkLengths(field, spec); err != nil {
		return nil, err
	}
	email := strings.TrimSpace(spec.User.Email)
	if email == "" {
		return nil, invalid(field+".user.email", "is required")
	}
	if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email {
		return nil, invalid(field+".user.email", fmt.Sprintf("'%s' is not a valid email address", email))
	}
	u := User{ID: newID(), Email: email, Username: spec.User.Username, Name: spec.User.Name,
		IsAdmin: on(spec.User.IsAdmin, false), IsRoot: on(spec.User.IsRoot, false), Metadata: spec.User.Metadata, CreatedAt: now}

	owner := email[:strings.IndexByte(email, '@')]
	switch {
	case u.Name != nil && *u.Name != "":
		owner = *u.Name
	case u.Username != nil && *u.Username != "":
		owner = *u.Username
	}
	org := Organization{ID: newID(), Name: owner + "'s Organization", OwnerUserID: u.ID, CreatedAt: now}
	if o := spec.Organization; o != nil {
		org.Slug, org.Description = o.Slug, o.Description
		if o.Name != nil && *o.Name != "" {
			org.Name = *o.Name
		}
	}
	wrk := Workspace{ID: newID(), OrganizationID: org.ID, Name: "Default", CreatedAt: now}
	if w := spec.Workspace; w != nil {
		wrk.Description = w.Description
		if w.Name != nil && *w.Name != "" {
			wrk.Name = *w.Name
		}
	}
	prj := Project{ID: newID(), OrganizationID: org.ID, WorkspaceID: wrk.ID, Name: "Default", IsDefault: true, CreatedAt: now}
	if p := spec.Project; p != nil {
		prj.Description = p.Description
		if p.Name != nil && *p.Name != "" {
			prj.Name = *p.Name
		}
	}
	acc := &Account{User: u, Organization: org, Workspace: wrk, Project: prj, SeedDefaults: on(opts.SeedDefaults, true)}
	for i, target := range []uuid.UUID{org.ID, wrk.ID, prj.ID} {
		acc.Memberships[i] = Membership{ID: newID(), TargetID: target, UserID: u.ID, Role: "owner", CreatedAt: now}
	}
	if on(opts.CreateIdentities, len(spec.UserIdentities) > 0) {
		for i, is := range spec.UserIdentities {
			id, err := buildIdentity(fmt.Sprintf("%s.user_identities[%d]", field, i), is, u.ID, now)
			if err != nil {
				return nil, err
			}
			acc.Identities = append(acc.Identities, id)
		}
	}
	if on(opts.CreateAPIKeys, true) {
		k := apikey.Generate()
		acc.Key = &APIKey{ID: newID(), ProjectID: prj.ID, Prefix: k.Prefix, SecretHash: k.Hash(), CreatedByID: &u.ID, CreatedAt: now}
		if on(opts.ReturnAPIKeys, true) {
			acc.RawKey = k.String()
		}
	}
	return acc, nil
}

func buildIdentity(field string, is IdentitySpec, user uuid.UUID, now time.Time) (Identity, error) {
	if is.Method != "email:password" && is.Method != "email:otp" {
		return Identity{}, invalid(field+".method", fmt.Sprintf("'%s' is not one of email:password, email:otp", is.Method))
	}
	if strings.TrimSpace(is.Subject) == "" {
		return Identity{}, invalid(field+".subject", "is required")
	}
	id := Identity{ID: newID(), UserID: user, Method: is.Method, Subject: is.Subject, Email: is.Email, Verified: on(is.Verified, false), CreatedAt: now}
	if is.Password != nil {
		if is.Method != "email:password" {
			return Identity{}, invalid(field+".password", "only email:password identities take a password")
		}
		h, err := bcrypt.GenerateFromPassword([]byte(*is.Password), bcrypt.DefaultCost)
		if err != nil {
			return Identity{}, invalid(field+".password", err.Error())
		}
		hs := string(h)
		id.PasswordHash = &hs
	}
	return id, nil
}

// Delete removes the referenced users and what they own (the projects'
// data in every service first, through the Purger); unknown users are a
// no-op, so the call is idempotent.
func (s *Service) Delete(ctx context.Context, refs map[string]UserRef) error {
	list := make([]UserRef, 0, len(refs))
	for ref, r := range refs {
		if r.ID == nil && (r.Email == nil || *r.Email == "") {
			return invalid("accounts."+ref+".user", "an id or an email is required")
		}
		list = append(list, r)
	}
	return s.deleteUsers(ctx, list)
}

// ErrKeyNotFound is the answer for a key that is not in the caller's project.
var ErrKeyNotFound = errs.New(errs.NotFound, "keys.not_found", "API key not found.")

var errNotMember = errs.Message(errs.Forbidden, "keys.not_member", "Only members of the project can manage its API keys.", nil)

// member checks that the user has a role in the project, directly or
// through its workspace or organization: keys belong to a user in a
// project (the authz table has already checked the caller's role for
// manage_keys). A key without a creator has no member behind it.
func (s *Service) member(ctx context.Context, projectID, userID uuid.UUID) error {
	role, err := s.store.ProjectRole(ctx, userID, projectID)
	if err != nil {
		return err
	}
	if role == "" {
		return errNotMember
	}
	return nil
}

// ProjectRole returns the user's effective role in the project, "" for a
// non-member (see Store.ProjectRole).
func (s *Service) ProjectRole(ctx context.Context, userID, projectID uuid.UUID) (roles.Role, error) {
	return s.store.ProjectRole(ctx, userID, projectID)
}

// ProjectWorkspace returns the workspace the project belongs to; uuid.Nil
// when the project does not exist.
func (s *Service) ProjectWorkspace(ctx context.Context, projectID uuid.UUID) (uuid.UUID, error) {
	return s.store.ProjectWorkspace(ctx, projectID)
}

// managesAllKeys reports whether role may see and revoke every key of the
// project. manage_keys alone (an editor) covers only the keys its holder
// created: a key is its creator's credential, and seeing or revoking
// someone else's is administration (manage_members, admins and owners).
func managesAllKeys(role roles.Role) bool { return role.Can(roles.ManageMembers) }

func createdBy(k APIKey, userID uuid.UUID) bool {
	return k.CreatedByID != nil && *k.CreatedByID == userID
}

// ListKeys returns the project's active keys, oldest first: all of them
// for an admin or owner, else only those the caller created.
func (s *Service) ListKeys(ctx context.Context, projectID, userID uuid.UUID, callerRole roles.Role) ([]APIKey, error) {
	if err := s.member(ctx, projectID, userID); err != nil {
		return nil, err
	}
	keys, err := s.store.ListKeys(ctx, projectID)
	if err != nil || managesAllKeys(callerRole) {
		return keys, err
	}
	mine := keys[:0]
	for _, k := range keys {
		if createdBy(k, userID) {
			mine = append(mine, k)
		}
	}
	return mine, nil
}

// CreateKey issues a key for the project; the raw key is returned only here.
// callerRole is the caller's role as the request authenticated it (a key's
// role is capped by its creator's); the new key's role is role, or the
// caller's when nil, and never more than the caller's: a key is a way to
// hand rights on, so one above the caller's is refused with roles.Denied
// naming the first permission the requested role has that the caller's
// lacks (manage_members for an editor asking for admin, own for an admin
// asking for owner): the permission the caller would need to grant it.
func (s *Service) CreateKey(ctx context.Context, projectID, userID uuid.UUID, callerRole roles.Role, role *string, name *string, expiresAt *time.Time) (APIKey, string, error) {
	if err := s.member(ctx, projectID, userID); err != nil {
		return APIKey{}, "", err
	}
	want := callerRole
	if role != nil {
		r, err := roles.Parse(*role)
		if err != nil {
			return APIKey{}, "", errs.Field(err.Error(), *role, "body", "api_key", "role")
		}
		want = r
	}
	if !callerRole.AtLeast(want) {
		return APIKey{}, "", roles.Denied(callerRole, missing(callerRole, want))
	}
	wantS := string(want)
	now := s.now().UTC().Truncate(time.Microsecond)
	if name != nil && utf8.RuneCountInString(*name) > MaxName {
		return APIKey{}, "", errs.Field(fmt.Sprintf("String should have at most %d characters", MaxName), nil, "body", "api_key", "name")
	}
	if expiresAt != nil && !expiresAt.After(now) {
		return APIKey{}, "", errs.Field("must be in the future", expiresAt.Format(time.RFC3339), "body", "api_key", "expires_at")
	}
	k := apikey.Generate()
	rec := APIKey{ID: newID(), ProjectID: projectID, Prefix: k.Prefix, SecretHash: k.Hash(), Name: name, CreatedByID: &userID, CreatedAt: now, ExpiresAt: expiresAt, Role: &wantS}
	if err := s.store.CreateKey(ctx, rec); err != nil {
		return APIKey{}, "", err
	}
	return rec, k.String(), nil
}

// missing is the first permission (in roles.Permissions order) want holds
// and have lacks; ManageMembers if none does (cannot happen for want above
// have).
func missing(have, want roles.Role) roles.Permission {
	for _, p := range roles.Permissions {
		if want.Can(p) && !have.Can(p) {
			return p
		}
	}
	return roles.ManageMembers
}

// RevokeKey revokes a key of the project; it stops working at once. A
// caller who is not an admin or owner revokes only keys they created;
// another's key is a 403 naming manage_members (the key exists: the
// caller could see it as a member's before this rule, and hiding it now
// would only make the refusal harder to understand).
func (s *Service) RevokeKey(ctx context.Context, projectID, userID uuid.UUID, callerRole roles.Role, id uuid.UUID) error {
	if err := s.member(ctx, projectID, userID); err != nil {
		return err
	}
	if !managesAllKeys(callerRole) {
		keys, err := s.store.ListKeys(ctx, projectID)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if k.ID == id && !createdBy(k, userID) {
				return roles.Denied(callerRole, roles.ManageMembers)
			}
		}
	}
	prefix, err := s.store.RevokeKey(ctx, projectID, id)
	if err != nil {
		return err
	}
	if prefix == "" {
		return ErrKeyNotFound
	}
	s.keys.Forget(prefix)
	return nil
}

// ErrNoProfile answers a profile request whose key has no user: the key's
// creator was deleted (keys outlive it with created_by_id unset).
var ErrNoProfile = errs.New(errs.NotFound, "profile.not_found", "The API key has no user: its creator no longer exists.")

// Profile returns the user an API key belongs to (its creator) with their
// memberships, across every organization, not only the key's project: it
// is the user's own record.
func (s *Service) Profile(ctx context.Context, userID uuid.UUID) (*Profile, error) {
	if userID == uuid.Nil {
		return nil, ErrNoProfile
	}
	p, err := s.store.Profile(ctx, userID)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, ErrNoProfile
	}
	return p, nil
}

func newID() uuid.UUID { return uuid.Must(uuid.NewV7()) }
