// Package setup builds the operator from its options: the manager with its
// cache, the shared runtime client cache, and the controllers. main only
// parses flags and calls Run.
package setup
