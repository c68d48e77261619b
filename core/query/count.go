package query

import (
	"slices"

	"github.com/memos-go/memos/core/text"
)

// AsksCount reports whether the question s asks to count or add up
// ("how many weddings did I attend", "how much did I spend in total",
// "what is the total number of courses"): its answer gathers several
// memories, usually from different occasions, rather than one. The test is
// on words, in any case: "how many", "how much", "total" or "altogether".
func AsksCount(s string) bool {
	toks := text.Tokenize(s)
	for i, t := range toks {
		switch t {
		case "total", "altogether":
			return true
		case "how":
			if i+1 < len(toks) && slices.Contains([]string{"many", "much"}, toks[i+1]) {
				return true
			}
		}
	}
	return false
}
