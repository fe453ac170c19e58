package roles_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/roles"
)

func TestTableIsMonotonic(t *testing.T) {
	// Each role can do everything the roles after it can.
	for i := 0; i+1 < len(roles.All); i++ {
		hi, lo := roles.All[i], roles.All[i+1]
		for _, p := range roles.Permissions {
			if lo.Can(p) {
				assert.True(t, hi.Can(p), "%s can %s but %s cannot", lo, p, hi)
			}
		}
		assert.True(t, hi.AtLeast(lo))
		assert.False(t, lo.AtLeast(hi))
		assert.Equal(t, lo, roles.Min(hi, lo))
		assert.Equal(t, lo, roles.Min(lo, hi))
	}
}

func TestRoles(t *testing.T) {
	assert.False(t, roles.Viewer.Can(roles.Write))
	assert.False(t, roles.Annotator.Can(roles.Deploy))
	assert.True(t, roles.Annotator.Can(roles.Annotate))
	assert.False(t, roles.Editor.Can(roles.ManageMembers))
	assert.True(t, roles.Owner.Can(roles.Own))
	assert.False(t, roles.Admin.Can(roles.Own))
	_, err := roles.Parse("root")
	assert.ErrorContains(t, err, "root")
	r, err := roles.Parse("editor")
	assert.NoError(t, err)
	assert.Equal(t, roles.Editor, r)
	assert.False(t, roles.Role("x").Can(roles.Read))
	assert.False(t, roles.Role("x").AtLeast(roles.Viewer))
	// Running a workflow (the playground, a try-out) is its own right, held
	// by every role that can run an evaluation, so no role lost a right.
	for _, r := range roles.All {
		assert.Equal(t, r.Can(roles.RunEvaluation), r.Can(roles.RunService), r)
	}
	assert.Equal(t, roles.Permission("run_service"), roles.RunService)
}

func TestDenied(t *testing.T) {
	err := roles.Denied(roles.Viewer, roles.Write)
	assert.Equal(t, errs.Forbidden, errs.KindOf(err))
	assert.Contains(t, err.Error(), `"write"`)
}
