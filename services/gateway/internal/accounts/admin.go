package accounts

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/apikey"
	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/roles"
)

// The admin simple routes create or delete one entity each, in one
// transaction: all or nothing, like Provision. They act with the
// platform's rights (the admin key), so they check existence, not roles.

// AdminCreateUser creates a user with optional identities.
func (s *Service) AdminCreateUser(ctx context.Context, spec UserSpec, ids []IdentitySpec) (User, []Identity, error) {
	// checkLengths names fields under a prefix ("accounts.<ref>"); here
	// the body's own names are the fields.
	if err := checkLengths("", Spec{User: spec, UserIdentities: ids}); err != nil {
		if e := errs.From(err); e.Kind == errs.Invalid {
			field := strings.TrimPrefix(e.Detail.(map[string]any)["field"].(string), ".")
			return User{}, nil, invalid(field, strings.TrimPrefix(e.Msg, e.Detail.(map[string]any)["field"].(string)+": "))
		}
		return User{}, nil, err
	}
	email, err := checkEmail("user.email", spec.Email)
	if err != nil {
		return User{}, nil, err
	}
	now := s.stamp()
	u := User{ID: newID(), Email: email, Username: spec.Username, Name: spec.Name, IsAdmin: on(spec.IsAdmin, false),
		IsRoot: on(spec.IsRoot, false), Metadata: spec.Metadata, CreatedAt: now}
	var out []Identity
	for i, is := range ids {
		id, err := buildIdentity(fmt.Sprintf("user_identities[%d]", i), is, u.ID, now)
		if err != nil {
			return User{}, nil, err
		}
		out = append(out, id)
	}
	if err := s.store.CreateUser(ctx, u, out); err != nil {
		return User{}, nil, err
	}
	return u, out, nil
}

// AdminDeleteUser deletes a user with the organizations they own (their
// projects' data first); 404 when there is no such user.
func (s *Service) AdminDeleteUser(ctx context.Context, id uuid.UUID) error {
	ok, err := s.store.UserExists(ctx, id)
	if err != nil {
		return err
	}
	if !ok {
		return ErrNotFound("user", id)
	}
	return s.deleteUsers(ctx, []UserRef{{ID: &id}})
}

// AdminCreateOrganization creates an organization owned by an existing
// user, with the owner's membership and nothing else.
func (s *Service) AdminCreateOrganization(ctx context.Context, ownerID uuid.UUID, name string, slug, description *string) (Organization, error) {
	if err := checkText("organization.name", &name, MaxName, true); err != nil {
		return Organization{}, err
	}
	if err := checkSlug("organization.slug", slug); err != nil {
		return Organization{}, err
	}
	if err := checkText("organization.description", description, MaxText, false); err != nil {
		return Organization{}, err
	}
	if ownerID == uuid.Nil {
		return Organization{}, invalid("organization.owner_user_id", "is required")
	}
	now := s.stamp()
	o := Organization{ID: newID(), Name: name, Slug: slug, Description: description, OwnerUserID: ownerID, CreatedAt: now}
	m := Membership{ID: newID(), TargetID: o.ID, UserID: ownerID, Role: "owner", CreatedAt: now}
	return o, s.store.CreateOrganization(ctx, o, nil, nil, []Membership{m})
}

// AdminCreateWorkspace creates a workspace in an existing organization.
func (s *Service) AdminCreateWorkspace(ctx context.Context, orgID uuid.UUID, name string, description *string) (Workspace, error) {
	if err := checkText("workspace.name", &name, MaxName, true); err != nil {
		return Workspace{}, err
	}
	if err := checkText("workspace.description", description, MaxText, false); err != nil {
		return Workspace{}, err
	}
	if _, err := s.store.Organization(ctx, orgID); err != nil {
		return Workspace{}, err
	}
	w := Workspace{ID: newID(), OrganizationID: orgID, Name: name, Description: description, CreatedAt: s.stamp()}
	return w, s.store.CreateWorkspace(ctx, w)
}

// AdminCreateProject creates a project in an existing workspace and seeds
// its defaults (undone when seeding fails).
func (s *Service) AdminCreateProject(ctx context.Context, workspaceID uuid.UUID, name string, description *string, isDefault bool) (Project, error) {
	if err := checkText("project.name", &name, MaxName, true); err != nil {
		return Project{}, err
	}
	if err := checkText("project.description", description, MaxText, false); err != nil {
		return Project{}, err
	}
	w, err := s.store.Workspace(ctx, workspaceID)
	if err != nil {
		return Project{}, err
	}
	p := Project{ID: newID(), OrganizationID: w.OrganizationID, WorkspaceID: workspaceID, Name: name, Description: description,
		IsDefault: isDefault, CreatedAt: s.stamp()}
	if err := s.store.CreateProject(ctx, p); err != nil {
		return Project{}, err
	}
	return p, s.seed(ctx, ProjectLevel, p.ID, p.ID, uuid.Nil)
}

// AdminDelete deletes an organization, workspace or project with its
// projects' data in every service (purged first).
func (s *Service) AdminDelete(ctx context.Context, level Level, id uuid.UUID) error {
	return s.deleteEntity(ctx, level, id)
}

// AdminCreateMembership adds one membership; 409 when the user already
// has one there, 404 when the user or the target does not exist.
func (s *Service) AdminCreateMembership(ctx context.Context, level Level, targetID, userID uuid.UUID, role string) (Membership, error) {
	r, err := parseRole("membership.role", role)
	if err != nil {
		return Membership{}, err
	}
	if targetID == uuid.Nil {
		return Membership{}, invalid("membership."+level.String()+"_id", "is required")
	}
	if userID == uuid.Nil {
		return Membership{}, invalid("membership.user_id", "is required")
	}
	m := Membership{ID: newID(), TargetID: targetID, UserID: userID, Role: string(r), CreatedAt: s.stamp()}
	defer s.rolesChanged()
	return m, s.store.CreateMembership(ctx, level, m)
}

// AdminDeleteMembership deletes one membership and revokes the member's
// keys below it; the organization owner's membership is a 409.
func (s *Service) AdminDeleteMembership(ctx context.Context, level Level, id uuid.UUID) error {
	prefixes, found, err := s.store.DeleteMembership(ctx, level, id)
	s.forget(prefixes)
	s.rolesChanged()
	if err != nil {
		return err
	}
	if !found {
		return ErrNotFound(level.String()+"_membership", id)
	}
	return nil
}

// AdminCreateKey issues a key for a user in a project the user has a role
// in; the raw key is returned only here. role, when set, is the key's own
// role, at most the user's (a 422 naming role otherwise); nil: the key
// follows the user's role.
func (s *Service) AdminCreateKey(ctx context.Context, userID, projectID uuid.UUID, keyRole *string, name *string, expiresAt *time.Time) (APIKey, string, error) {
	if err := checkText("name", name, MaxName, false); err != nil {
		return APIKey{}, "", err
	}
	now := s.stamp()
	if expiresAt != nil && !expiresAt.After(now) {
		return APIKey{}, "", invalid("expires_at", "must be in the future")
	}
	role, err := s.store.ProjectRole(ctx, userID, projectID)
	if err != nil {
		return APIKey{}, "", err
	}
	if role == "" {
		return APIKey{}, "", errs.Message(errs.NotFound, "accounts.not_member",
			fmt.Sprintf("User %s has no role in project %s (or one of them does not exist).", userID, projectID),
			map[string]any{"user_id": userID.String(), "project_id": projectID.String()})
	}
	if keyRole != nil {
		r, err := roles.Parse(*keyRole)
		if err != nil {
			return APIKey{}, "", errs.Field(err.Error(), *keyRole, "body", "role")
		}
		if !role.AtLeast(r) {
			return APIKey{}, "", errs.Field(fmt.Sprintf("above the user's role in the project (%s)", role), *keyRole, "body", "role")
		}
	}
	k := apikey.Generate()
	rec := APIKey{ID: newID(), ProjectID: projectID, Prefix: k.Prefix, SecretHash: k.Hash(), Name: name, CreatedByID: &userID, CreatedAt: now, ExpiresAt: expiresAt, Role: keyRole}
	if err := s.store.CreateKey(ctx, rec); err != nil {
		return APIKey{}, "", err
	}
	return rec, k.String(), nil
}

// AdminRevokeKey revokes any key; it stops working at once.
func (s *Service) AdminRevokeKey(ctx context.Context, id uuid.UUID) error {
	prefix, err := s.store.RevokeKeyByID(ctx, id)
	if err != nil {
		return err
	}
	if prefix == "" {
		return ErrKeyNotFound
	}
	s.keys.Forget(prefix)
	return nil
}

// AdminAddIdentities adds sign-in identities (email:password or
// email:otp) to an existing user, named by id or email; all or none.
func (s *Service) AdminAddIdentities(ctx context.Context, ref UserRef, specs []IdentitySpec) ([]Identity, error) {
	if len(specs) == 0 {
		return nil, invalid("user_identities", "at least one identity is required")
	}
	var user uuid.UUID
	switch {
	case ref.ID != nil:
		ok, err := s.store.UserExists(ctx, *ref.ID)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, ErrNotFound("user", *ref.ID)
		}
		user = *ref.ID
	case ref.Email != nil && *ref.Email != "":
		u, _, err := s.store.UserByEmail(ctx, *ref.Email)
		if err != nil {
			return nil, err
		}
		if u == nil {
			return nil, errs.Message(errs.NotFound, "accounts.no_user", fmt.Sprintf("No user has the email %s.", *ref.Email),
				map[string]any{"email": *ref.Email})
		}
		user = u.ID
	default:
		return nil, invalid("user", "an id or an email is required")
	}
	for i, is := range specs {
		at := fmt.Sprintf("user_identities[%d]", i)
		if err := checkText(at+".subject", &is.Subject, MaxEmail, false); err != nil {
			return nil, err
		}
		if err := checkText(at+".email", is.Email, MaxEmail, false); err != nil {
			return nil, err
		}
	}
	now := s.stamp()
	out := make([]Identity, 0, len(specs))
	for i, is := range specs {
		id, err := buildIdentity(fmt.Sprintf("user_identities[%d]", i), is, user, now)
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, s.store.AddIdentities(ctx, out)
}

// AdminDeleteIdentity deletes one sign-in identity; 404 when there is
// none. The user's sessions and keys stay: they were issued already.
func (s *Service) AdminDeleteIdentity(ctx context.Context, id uuid.UUID) error {
	found, err := s.store.DeleteIdentity(ctx, id)
	if err != nil {
		return err
	}
	if !found {
		return ErrNotFound("user_identity", id)
	}
	return nil
}

// AdminUserID resolves a user named by id or email; 404 when there is
// none.
func (s *Service) AdminUserID(ctx context.Context, ref UserRef) (uuid.UUID, error) {
	switch {
	case ref.ID != nil:
		ok, err := s.store.UserExists(ctx, *ref.ID)
		if err != nil {
			return uuid.Nil, err
		}
		if !ok {
			return uuid.Nil, ErrNotFound("user", *ref.ID)
		}
		return *ref.ID, nil
	case ref.Email != nil && *ref.Email != "":
		u, _, err := s.store.UserByEmail(ctx, *ref.Email)
		if err != nil {
			return uuid.Nil, err
		}
		if u == nil {
			return uuid.Nil, errs.Message(errs.NotFound, "accounts.no_user", fmt.Sprintf("No user has the email %s.", *ref.Email),
				map[string]any{"email": *ref.Email})
		}
		return u.ID, nil
	}
	return uuid.Nil, invalid("user", "an id or an email is required")
}
