package httpapi_test

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSignInThrottle replays the guessing attack: 60 wrong passwords for
// one account, 20 of them in parallel with a rotating X-Forwarded-For.
// The account is throttled (429 with Retry-After) well before the 60th,
// the right password is refused too while it lasts, and a forwarded
// header from a peer that is not a configured proxy changes nothing
// (throttle.Limiter, throttle.Proxies.ClientAddr).
func TestSignInThrottle(t *testing.T) {
	s := newStack(t)
	s.userWithPassword(t, "victim@example.com", "correct horse")

	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for i := 0; i < 60; i++ {
		if i >= 40 {
			wg.Wait() // the last 20 one by one
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := s.do(t, "POST", "/api/auth/sign-in", "", map[string]any{"email": "victim@example.com", "password": fmt.Sprintf("guess-%d", i)},
				"X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i))
			mu.Lock()
			codes[r.status]++
			mu.Unlock()
			if r.status == http.StatusTooManyRequests {
				ra, err := strconv.Atoi(r.header.Get("Retry-After"))
				assert.NoError(t, err, "Retry-After: %q", r.header.Get("Retry-After"))
				assert.Greater(t, ra, 1, "seconds until the window ends")
				assert.Contains(t, string(r.body), "Too many failed sign-ins")
			}
		}(i)
		if i < 20 {
			continue // the first 20 in parallel
		}
		wg.Wait()
	}
	wg.Wait()
	assert.Equal(t, 60, codes[http.StatusUnauthorized]+codes[http.StatusTooManyRequests], "%v", codes)
	assert.GreaterOrEqual(t, codes[http.StatusTooManyRequests], 40, "%v", codes)
	r := s.do(t, "POST", "/api/auth/sign-in", "", map[string]any{"email": "victim@example.com", "password": "correct horse"})
	require.Equal(t, http.StatusTooManyRequests, r.status, "the right password waits too: %s", r.body)
	assert.NotEmpty(t, r.header.Get("Retry-After"))

	// one address guessing many accounts: rotating the forwarded header
	// from an untrusted peer does not make new addresses
	throttled := false
	for i := 0; i < 40 && !throttled; i++ {
		r := s.do(t, "POST", "/api/auth/sign-in", "", map[string]any{"email": fmt.Sprintf("u%d@example.com", i), "password": "guess-guess"},
			"X-Forwarded-For", fmt.Sprintf("203.0.113.%d", i))
		throttled = r.status == http.StatusTooManyRequests
	}
	assert.True(t, throttled, "the address is throttled whatever it forwards")
}

// TestAcceptPasswordGuessesThrottled: an invitation to an existing account
// checks that account's password, so guessing it there is throttled like
// sign-in.
func TestAcceptPasswordGuessesThrottled(t *testing.T) {
	s := newStack(t)
	own := s.teamAccount(t, "own@example.com")
	s.userWithPassword(t, "known@example.com", "correct horse")
	token := s.want(t, http.StatusCreated, "POST", "/api/workspaces/"+own.workspaceID+"/invitations", own.auth(),
		map[string]any{"email": "known@example.com", "role": "viewer"})["token"].(string)
	throttled := false
	for i := 0; i < 40 && !throttled; i++ {
		r := s.do(t, "POST", "/api/invitations/accept", "", map[string]any{"token": token, "password": fmt.Sprintf("guess-%d-x", i)})
		throttled = r.status == http.StatusTooManyRequests
		if throttled {
			assert.NotEmpty(t, r.header.Get("Retry-After"))
		} else {
			require.Equal(t, http.StatusForbidden, r.status, string(r.body))
		}
	}
	assert.True(t, throttled, "40 guesses from one address")
}
