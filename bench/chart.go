package main

import (
	"fmt"
	"math"
	"strings"
)

// svg draws the headline cells (W=16, or the largest W, both critical
// sections) as three bar panels: throughput, max wait (log scale) and
// Redis commands per acquisition, one bar per lock and critical section.
func (r *report) svg() string {
	w, _ := r.headline()
	type series struct {
		cs    int
		color string
	}
	colors := []string{"#4e79a7", "#f28e2b", "#59a14f"}
	var ss []series
	for i, cs := range r.Meta.Config.CriticalUs {
		ss = append(ss, series{cs, colors[i%len(colors)]})
	}
	panels := []struct {
		title string
		value func(c *cellResult) float64
		log   bool
		label func(v float64) string
	}{
		{"acquisitions / s (higher is better)", func(c *cellResult) float64 { return c.PerSec }, false, func(v float64) string { return num(v) }},
		{"max wait, log scale (lower is better)", func(c *cellResult) float64 { return c.MaxWaitUs }, true, us},
		{"Redis commands / acquisition (lower is better)", func(c *cellResult) float64 { return c.CmdsPerAcq }, false, num},
		{"FIFO inversions, % of grants (lower is better)", func(c *cellResult) float64 { return c.InvPct }, false, func(v float64) string { return fmt.Sprintf("%.0f%%", v) }},
	}
	const (
		labelW = 150
		panelW = 280
		gap    = 40
		barH   = 9
		top    = 70
	)
	rowH := barH*len(ss) + 8
	height := top + rowH*len(r.Kinds) + 50
	width := labelW + len(panels)*(panelW+gap)

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans, Arial, sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14" font-weight="bold">%d workers on one lock, each with its own client (Redis %s, %d CPUs, %s)</text>`+"\n",
		w, esc(r.Meta.Redis), r.Meta.CPUs, esc(r.Meta.Command))
	lx := 10
	for _, s := range ss {
		fmt.Fprintf(&b, `<rect x="%d" y="32" width="12" height="10" fill="%s"/><text x="%d" y="41">critical section %d µs</text>`+"\n", lx, s.color, lx+16, s.cs)
		lx += 170
	}
	for i, k := range r.Kinds {
		y := top + i*rowH
		if i%2 == 1 {
			fmt.Fprintf(&b, `<rect x="0" y="%d" width="%d" height="%d" fill="#f4f4f4"/>`+"\n", y, width, rowH)
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", labelW-6, y+rowH/2+3, esc(k.ID))
	}
	for p, pan := range panels {
		x0 := labelW + p*(panelW+gap)
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", x0, top-10, esc(pan.title))
		var vmax, vmin float64 = 0, math.Inf(1)
		for i := range r.Contended {
			c := &r.Contended[i]
			if c.Workers == w && c.clients() == w && c.Err == "" {
				v := pan.value(c)
				vmax = max(vmax, v)
				if v > 0 {
					vmin = min(vmin, v)
				}
			}
		}
		if vmax <= 0 {
			continue
		}
		lo, hi := 0.0, vmax*1.05
		if pan.log {
			lo, hi = math.Floor(math.Log10(vmin)), math.Ceil(math.Log10(vmax))
			if hi <= lo {
				hi = lo + 1
			}
		}
		scale := func(v float64) float64 {
			if pan.log {
				if v <= 0 {
					return 0
				}
				return (math.Log10(v) - lo) / (hi - lo) * float64(panelW-60)
			}
			return v / hi * float64(panelW-60)
		}
		bottom := top + rowH*len(r.Kinds)
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>`+"\n", x0, top-4, x0, bottom)
		if pan.log {
			for e := lo; e <= hi; e++ {
				gx := float64(x0) + scale(math.Pow(10, e))
				fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/><text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>`+"\n",
					gx, top-4, gx, bottom, gx, bottom+14, esc(us(math.Pow(10, e))))
			}
		}
		for i, k := range r.Kinds {
			for j, s := range ss {
				c := r.cell(k.ID, w, w, s.cs)
				if c == nil || c.Err != "" {
					continue
				}
				v := pan.value(c)
				y := top + i*rowH + j*barH + 4
				bw := scale(v)
				fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", x0+1, y, max(bw, 0.5), barH-1, s.color)
				fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="9" fill="#333">%s</text>`+"\n", float64(x0)+max(bw, 0.5)+3, y+barH-2, esc(pan.label(v)))
			}
		}
	}
	fmt.Fprintf(&b, `<text x="10" y="%d" fill="#555">Max wait includes requests still waiting when the %g s window closed. Source: results.json.</text>`+"\n", height-12, r.Meta.Config.CellSeconds)
	b.WriteString("</svg>\n")
	return b.String()
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
