// Package plot draws line and scatter plots as PNG with the standard
// library only (image, image/png): axes with round ticks, a legend, and text
// in a small built-in bitmap font. It is enough for the scale report's plots
// and keeps the e2e module free of a plotting dependency.
package plot
