package query_test

import (
	"fmt"

	"github.com/memos-go/memos/core/query"
)

func ExampleParse() {
	n, err := query.Parse(`alice OR open-source config* NOT "closed beta"`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(n)

	_, err = query.Parse(`"unbalanced`)
	fmt.Println(err)
	// Output:
	// ("alice" OR (("open source" AND "config"*) NOT "closed beta"))
	// query: unbalanced quote at column 1
}

func ExampleNatural() {
	fmt.Println(query.Natural("What does Alice like about open-source?"))
	// Output:
	// ("alice" OR "like" OR "open source")
}
