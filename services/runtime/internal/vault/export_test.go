package vault

import "time"

// SetClock replaces the cache's clock, so a test moves past the ttl
// without sleeping.
func (c *Client) SetClock(now func() time.Time) { c.now = now }
