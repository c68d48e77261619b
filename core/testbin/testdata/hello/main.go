// Command hello prints a greeting; testbin's tests build and run it.
package main

import "fmt"

func main() { fmt.Println("hello from a built program") }
