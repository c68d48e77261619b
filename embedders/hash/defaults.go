package hash

import "github.com/memos-go/memos/core/driver"

var _ driver.Defaulter = (*Config)(nil)

// Defaults sets the fields of c left zero to the values New applies.
func (c *Config) Defaults() {
	if c.Dim == 0 {
		c.Dim = DefaultDim
	}
}
