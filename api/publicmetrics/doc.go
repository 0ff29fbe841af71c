// Package publicmetrics holds what the operator, the listener and the agent
// share to export the public lifecycle manager's metric names beside their
// own: reading the series of a collector, and checking the migration
// guide's table of those names against what a module registers.
package publicmetrics
