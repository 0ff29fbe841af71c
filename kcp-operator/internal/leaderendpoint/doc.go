// Package leaderendpoint keeps the event listener's Service pointing at the
// leader only.
//
// Every replica serves the listener port, but only the leader runs the
// controllers that consume events; a standby answers them 503, which costs
// the agent a pause of its whole queue. Pod readiness cannot tell the two
// apart without breaking rollouts and disruption budgets (a standby that is
// never Ready blocks a rolling update, and a budget counting only the
// leader never allows its eviction). So the listener's Service has no
// selector, and the leader writes its EndpointSlice itself: one endpoint,
// its own address, once its listener has consumers. A new leader replaces
// the endpoint; a leader that stops marks it not ready first, and only
// while the slice still names it, so a late write never hides its successor.
package leaderendpoint
