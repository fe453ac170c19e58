package accounts

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/roles"
)

// The use cases behind the compatible platform's team routes
// (docs/reference/gateway.md, teams): its web frontend names members by email
// rather than by user id and sees a workspace's whole team, pending invitations
// included. Each one maps onto the use cases of teams.go and invitations.go, so
// the same role checks apply whichever route a client calls.

// DefaultOrgFlags are the flags an organization reads as until a client
// sets them. The gateway stores them and does not act on them: sign-in
// methods and domains are the deployment's, not the organization's.
var DefaultOrgFlags = map[string]bool{
	"is_demo": false, "is_personal": false, "allow_email": true, "allow_social": true,
	"allow_sso": true, "allow_root": true, "domains_only": false, "auto_join": false,
}

// OrgFlags returns the organization's flags with the defaults filled in.
func (o Organization) OrgFlags() map[string]bool {
	out := make(map[string]bool, len(DefaultOrgFlags))
	for k, v := range DefaultOrgFlags {
		out[k] = v
	}
	for k, v := range o.Flags {
		if _, ok := DefaultOrgFlags[k]; ok {
			out[k] = v
		}
	}
	return out
}

// checkOrgFlags refuses a flag the organization does not have, naming it,
// rather than dropping it as the compatible platform does: a typo would
// otherwise look saved.
func checkOrgFlags(f map[string]bool) error {
	for k := range f {
		if _, ok := DefaultOrgFlags[k]; !ok {
			names := make([]string, 0, len(DefaultOrgFlags))
			for n := range DefaultOrgFlags {
				names = append(names, n)
			}
			sort.Strings(names)
			return invalid("flags."+k, "unknown flag: one of "+strings.Join(names, ", "))
		}
	}
	return nil
}

// compatRoles maps the compatible platform's role names onto ours; our own
// names are accepted as they are.
var compatRoles = map[string]roles.Role{
	"workspace_admin":    roles.Admin,
	"evaluator":          roles.Annotator,
	"deployment_manager": roles.Editor,
}

// ParseRole reads a role by our name or by the compatible platform's
// (workspace_admin, evaluator, deployment_manager); a 400 naming field
// otherwise.
func ParseRole(field, s string) (roles.Role, error) {
	if r, ok := compatRoles[s]; ok {
		return r, nil
	}
	return parseRole(field, s)
}

// TeamMember is one row of a workspace's team as the compatible clients
// list it: a user with their effective role there (the workspace
// membership, else the organization's), or an invitation not yet accepted
// (Status pending or expired; UserID is then the invitation's id).
type TeamMember struct {
	UserID    uuid.UUID
	Email     string
	Username  *string
	Name      *string
	Role      roles.Role
	Status    string // member, pending or expired
	CreatedAt time.Time
}

// Team lists the workspace's team (read on the workspace): everyone with a
// membership in it or in its organization, oldest first, then its pending
// and expired invitations for emails that are not members yet.
func (s *Service) Team(ctx context.Context, c Caller, workspaceID uuid.UUID) ([]TeamMember, error) {
	a, err := s.authorize(ctx, c, WorkspaceLevel, workspaceID, roles.Read)
	if err != nil {
		return nil, err
	}
	org, err := s.store.Members(ctx, OrganizationLevel, a.OrganizationID)
	if err != nil {
		return nil, err
	}
	ws, err := s.store.Members(ctx, WorkspaceLevel, workspaceID)
	if err != nil {
		return nil, err
	}
	byUser := map[uuid.UUID]int{}
	var out []TeamMember
	for _, list := range [][]Member{org, ws} { // the workspace's role overrides the organization's
		for _, m := range list {
			role := roles.Role(m.Role)
			if m.UserID == a.OwnerUserID {
				role = roles.Owner
			}
			tm := TeamMember{UserID: m.UserID, Email: m.Email, Username: m.Username, Name: m.Name, Role: role,
				Status: "member", CreatedAt: m.CreatedAt}
			if i, ok := byUser[m.UserID]; ok {
				tm.CreatedAt = out[i].CreatedAt
				out[i] = tm
				continue
			}
			byUser[m.UserID] = len(out)
			out = append(out, tm)
		}
	}
	members := map[string]bool{}
	for _, m := range out {
		members[strings.ToLower(m.Email)] = true
	}
	invs, err := s.store.Invitations(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	now := s.stamp()
	for _, inv := range invs { // newest first: the first of an email is its latest
		st := inv.State(now)
		if (st != InvitationPending && st != InvitationExpired) || members[strings.ToLower(inv.Email)] {
			continue
		}
		members[strings.ToLower(inv.Email)] = true
		out = append(out, TeamMember{UserID: inv.ID, Email: inv.Email, Role: inv.Role, Status: st, CreatedAt: inv.CreatedAt})
	}
	return out, nil
}

// CheckWorkspaceIn is a 404 unless the workspace exists in the
// organization and the caller has a role in it (the compatible routes name
// both).
func (s *Service) CheckWorkspaceIn(ctx context.Context, c Caller, orgID, workspaceID uuid.UUID) error {
	a, err := s.access(ctx, c, WorkspaceLevel, workspaceID)
	if err != nil {
		return err
	}
	if a.OrganizationID != orgID {
		return ErrNotFound("workspace", workspaceID)
	}
	return nil
}

// ResendByEmail reissues the latest pending or expired invitation of the
// email to the workspace (manage_members on it); 404 when there is none.
func (s *Service) ResendByEmail(ctx context.Context, c Caller, workspaceID uuid.UUID, email string) (IssuedInvitation, error) {
	email, err := checkEmail("email", email)
	if err != nil {
		return IssuedInvitation{}, err
	}
	inv, err := s.openInvitation(ctx, c, workspaceID, email)
	if err != nil {
		return IssuedInvitation{}, err
	}
	if inv == nil {
		return IssuedInvitation{}, errNoInvitation(email)
	}
	return s.ResendInvitation(ctx, c, workspaceID, inv.ID)
}

func errNoInvitation(email string) error {
	return errs.Message(errs.NotFound, "invitations.none",
		fmt.Sprintf("No open invitation for %s in this workspace.", email), map[string]any{"email": email})
}

// openInvitation returns the email's latest pending or expired invitation
// to the workspace, nil if none (manage_members on it).
func (s *Service) openInvitation(ctx context.Context, c Caller, workspaceID uuid.UUID, email string) (*Invitation, error) {
	list, err := s.Invitations(ctx, c, workspaceID)
	if err != nil {
		return nil, err
	}
	now := s.stamp()
	for _, inv := range list {
		st := inv.State(now)
		if strings.EqualFold(inv.Email, email) && (st == InvitationPending || st == InvitationExpired) {
			return &inv, nil
		}
	}
	return nil, nil
}

// RemoveByEmail takes the email out of the workspace's team: the user's
// workspace membership when they have one, else their organization
// membership (which is what gives them the workspace), else the email's
// open invitation is revoked. RemoveMember's rules apply (manage_members,
// or the user leaving; nobody above the caller; never the owner).
func (s *Service) RemoveByEmail(ctx context.Context, c Caller, workspaceID uuid.UUID, email string) error {
	email, err := checkEmail("email", email)
	if err != nil {
		return err
	}
	a, err := s.access(ctx, c, WorkspaceLevel, workspaceID)
	if err != nil {
		return err
	}
	u, _, err := s.store.UserByEmail(ctx, email)
	if err != nil {
		return err
	}
	if u != nil {
		if m, err := s.store.Member(ctx, WorkspaceLevel, workspaceID, u.ID); err != nil {
			return err
		} else if m != nil {
			return s.RemoveMember(ctx, c, WorkspaceLevel, workspaceID, u.ID)
		}
		if m, err := s.store.Member(ctx, OrganizationLevel, a.OrganizationID, u.ID); err != nil {
			return err
		} else if m != nil {
			return s.RemoveMember(ctx, c, OrganizationLevel, a.OrganizationID, u.ID)
		}
	}
	inv, err := s.openInvitation(ctx, c, workspaceID, email)
	if err != nil {
		return err
	}
	if inv == nil {
		return errs.Message(errs.NotFound, "accounts.not_member",
			fmt.Sprintf("%s is neither a member of this workspace nor invited to it.", email), map[string]any{"email": email})
	}
	return s.store.RevokeInvitation(ctx, inv.ID)
}

// userByEmail is the user with that email, a 404 naming it otherwise.
func (s *Service) userByEmail(ctx context.Context, email string) (*User, error) {
	email, err := checkEmail("email", email)
	if err != nil {
		return nil, err
	}
	u, _, err := s.store.UserByEmail(ctx, email)
	if err != nil {
		return nil, err
	}
	if u == nil {
		return nil, errs.Message(errs.NotFound, "accounts.no_user",
			fmt.Sprintf("No user has the email %s; invite them first.", email), map[string]any{"email": email})
	}
	return u, nil
}

// SetWorkspaceRoleByEmail gives the email's user a role in the workspace
// (SetMemberRole's rules).
func (s *Service) SetWorkspaceRoleByEmail(ctx context.Context, c Caller, workspaceID uuid.UUID, email, role string) (Member, error) {
	r, err := ParseRole("role", role)
	if err != nil {
		return Member{}, err
	}
	if _, err := s.access(ctx, c, WorkspaceLevel, workspaceID); err != nil {
		return Member{}, err
	}
	u, err := s.userByEmail(ctx, email)
	if err != nil {
		return Member{}, err
	}
	return s.SetMemberRole(ctx, c, WorkspaceLevel, workspaceID, u.ID, string(r))
}

// UnsetWorkspaceRoleByEmail takes the role back: one membership holds one
// role, so the user's workspace membership is removed when it holds that
// role (RemoveMember's rules), and they keep what their organization
// membership gives them. 404 when it holds another role or none.
func (s *Service) UnsetWorkspaceRoleByEmail(ctx context.Context, c Caller, workspaceID uuid.UUID, email, role string) error {
	r, err := ParseRole("role", role)
	if err != nil {
		return err
	}
	if _, err := s.access(ctx, c, WorkspaceLevel, workspaceID); err != nil {
		return err
	}
	u, err := s.userByEmail(ctx, email)
	if err != nil {
		return err
	}
	m, err := s.store.Member(ctx, WorkspaceLevel, workspaceID, u.ID)
	if err != nil {
		return err
	}
	if m == nil || m.Role != string(r) {
		return errs.Message(errs.NotFound, "accounts.no_role",
			fmt.Sprintf("%s does not hold the role %s in this workspace.", u.Email, r), map[string]any{"email": u.Email, "role": string(r)})
	}
	return s.RemoveMember(ctx, c, WorkspaceLevel, workspaceID, u.ID)
}
