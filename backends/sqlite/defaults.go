package sqlite

import (
	"runtime"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/text"
)

var _ driver.Defaulter = (*Config)(nil)

// Defaults sets the fields of c left zero to the values Open applies in
// their place (the path has none: it must be given).
func (c *Config) Defaults() {
	if c.BusyTimeout == 0 {
		c.BusyTimeout = DefaultBusyTimeout
	}
	if c.ReadConns == 0 {
		c.ReadConns = max(4, runtime.GOMAXPROCS(0))
	}
	if c.KeywordPruneRows == 0 {
		c.KeywordPruneRows = text.DefaultPruneRows
	}
}
