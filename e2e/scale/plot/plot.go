package plot

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Style is how a series is drawn.
type Style int

// Styles of a series.
const (
	// Line joins the points in their order.
	Line Style = iota
	// Dots draws each point as a small square.
	Dots
)

// XY is one point.
type XY struct{ X, Y float64 }

// Series is one named set of points.
type Series struct {
	Name   string
	Points []XY
	Style  Style
}

// Chart is a plot with one or more series on shared axes.
type Chart struct {
	Title, XLabel, YLabel string
	Series                []Series
	// Width and Height in pixels; default 960×540.
	Width, Height int
}

// palette colours the series in order.
var palette = []color.RGBA{
	{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
}

// margin is the white space around the plot.
const margin = vg.Length(8)

// ErrNoPoints means the chart has nothing to draw.
var ErrNoPoints = errors.New("plot: no points to draw")

// build lays the chart out as a gonum plot. Points that are not finite
// are left out (gonum refuses them), and so are series left without
// points, from the legend too. The Y axis starts at zero at the latest:
// the plots are counts and rates, whose size is read against zero.
func (c Chart) build() (*gplot.Plot, error) {
	p := gplot.New()
	p.Title.Text = c.Title
	p.Title.TextStyle.Font.Size = vg.Points(14)
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text, p.Y.Label.Text = c.XLabel, c.YLabel
	p.Add(plotter.NewGrid())
	// The legend sits top left, where growing curves rarely are.
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(8), -vg.Points(4)
	drawn := 0
	for i, s := range c.Series {
		xys := finite(s.Points)
		if len(xys) == 0 {
			continue
		}
		col := palette[i%len(palette)]
		var thumb gplot.Thumbnailer
		switch s.Style {
		case Dots:
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return nil, fmt.Errorf("plot %q, series %q: %w", c.Title, s.Name, err)
			}
			sc.Color, sc.Shape, sc.Radius = col, draw.BoxGlyph{}, vg.Points(2)
			p.Add(sc)
			thumb = sc
		default:
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, fmt.Errorf("plot %q, series %q: %w", c.Title, s.Name, err)
			}
			l.Color, l.Width = col, vg.Points(1.5)
			p.Add(l)
			thumb = l
		}
		if len(c.Series) > 1 {
			p.Legend.Add(s.Name, thumb)
		}
		drawn++
	}
	if drawn == 0 {
		return nil, ErrNoPoints
	}
	p.Y.Min = math.Min(0, p.Y.Min)
	return p, nil
}

func finite(points []XY) plotter.XYs {
	out := make(plotter.XYs, 0, len(points))
	for _, pt := range points {
		if math.IsNaN(pt.X) || math.IsNaN(pt.Y) || math.IsInf(pt.X, 0) || math.IsInf(pt.Y, 0) {
			continue
		}
		out = append(out, plotter.XY{X: pt.X, Y: pt.Y})
	}
	return out
}

// Render draws the chart on a white image of Width×Height pixels.
func (c Chart) Render() (image.Image, error) {
	p, err := c.build()
	if err != nil {
		return nil, err
	}
	w, h := c.Width, c.Height
	if w == 0 {
		w = 960
	}
	if h == 0 {
		h = 540
	}
	canvas := vgimg.NewWith(vgimg.UseImage(image.NewRGBA(image.Rect(0, 0, w, h))))
	p.Draw(draw.Crop(draw.New(canvas), margin, -margin, margin, -margin))
	return canvas.Image(), nil
}

// EncodePNG renders the chart as PNG bytes.
func (c Chart) EncodePNG() ([]byte, error) {
	img, err := c.Render()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encoding the plot %q: %w", c.Title, err)
	}
	return buf.Bytes(), nil
}

// WriteFile writes the chart as a PNG file.
func (c Chart) WriteFile(path string) error {
	data, err := c.EncodePNG()
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("writing the plot %s: %w", path, err)
	}
	return nil
}
