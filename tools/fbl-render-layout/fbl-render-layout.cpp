//===- fbl-render-layout.cpp - Draw a layout's tile map as SVG ------------===//
//
// Draws where each element of a small matrix lands in an image, straight
// from the layout algebra: the logical matrix on the left (colour = tile),
// the RGBA image on the right (each texel split into its four channels,
// labelled with the element it holds). docs/ pictures are made with it.
//
// Usage: fbl-render-layout ROWS COLS LAYOUT... > out.svg
//   LAYOUT: channel_packed:P | rtile:TRxTC:P:INTRA:INTER  (INTRA = y|x|linear,
//   INTER = row|col), e.g. rtile:4x4:1:x:row
//
//===----------------------------------------------------------------------===//

#include "fbl/Layout/Layout.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace fbl::layout;

namespace {

struct Panel {
  std::string title;
  Layout layout;
};

bool parseLayout(const std::string &spec, Panel &panel) {
  std::vector<std::string> parts;
  std::stringstream ss(spec);
  for (std::string p; std::getline(ss, p, ':');)
    parts.push_back(p);
  if (parts.size() == 2 && parts[0] == "channel_packed") {
    int p = std::atoi(parts[1].c_str());
    panel = {"#fbl.channel_packed<packed = " + parts[1] + ">",
             Layout::channelPacked(2, p)};
    return true;
  }
  if (parts.size() == 5 && parts[0] == "rtile") {
    int64_t tr = 0, tc = 0;
    if (std::sscanf(parts[1].c_str(), "%ldx%ld", &tr, &tc) != 2)
      return false;
    int p = std::atoi(parts[2].c_str());
    IntraTileOrder intra = parts[3] == "x"        ? IntraTileOrder::RowsOnX
                           : parts[3] == "linear" ? IntraTileOrder::Linear
                                                  : IntraTileOrder::RowsOnY;
    InterTileOrder inter =
        parts[4] == "col" ? InterTileOrder::ColMajor : InterTileOrder::RowMajor;
    static const char *intraNames[] = {"rows_on_y", "rows_on_x", "linear"};
    static const char *interNames[] = {"row_major", "col_major"};
    panel = {"#fbl.rtile<tile = [" + parts[1].substr(0, parts[1].find('x')) +
                 ", " + parts[1].substr(parts[1].find('x') + 1) +
                 "], packed = " + parts[2] +
                 ", intra = " + intraNames[int(intra)] +
                 ", inter = " + interNames[int(inter)] + ">",
             Layout::rtile(2, tr, tc, p, intra, inter)};
    return panel.layout.verify().empty();
  }
  return false;
}

std::string escapeXml(const std::string &s) {
  std::string out;
  for (char c : s)
    out += c == '<'   ? "&lt;"
           : c == '>' ? "&gt;"
           : c == '&' ? "&amp;"
                      : std::string(1, c);
  return out;
}

/// A colour per tile, far apart for neighbouring tiles.
std::string tileColour(int64_t tile) {
  int hue = static_cast<int>((tile * 137) % 360);
  return "hsl(" + std::to_string(hue) + ",70%,80%)";
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 4) {
    std::cerr
        << "usage: fbl-render-layout ROWS COLS LAYOUT...\n"
           "  LAYOUT: channel_packed:P | rtile:TRxTC:P:y|x|linear:row|col\n";
    return 2;
  }
  std::vector<int64_t> shape = {std::atol(argv[1]), std::atol(argv[2])};
  if (shape[0] < 1 || shape[1] < 1 || shape[0] > 64 || shape[1] > 64) {
    std::cerr << "error: ROWS and COLS must be in [1, 64]\n";
    return 2;
  }
  std::vector<Panel> panels;
  for (int i = 3; i < argc; ++i) {
    Panel p;
    if (!parseLayout(argv[i], p)) {
      std::cerr << "error: bad layout '" << argv[i] << "'\n";
      return 2;
    }
    panels.push_back(p);
  }

  const int cell = 26, texel = 52, gap = 60, titleH = 40;
  // Geometry: each row of the figure is one layout.
  std::vector<Extents> ext;
  int width = 0, height = 10;
  for (const Panel &p : panels) {
    Extents e = p.layout.extents(shape);
    ext.push_back(e);
    int w = int(shape[1]) * cell + gap + int(e.width) * texel + 20;
    int h = titleH + std::max(int(shape[0]) * cell, int(e.height) * texel) + 30;
    // Titles are ~8.5 px per character at 14 px monospace.
    int titleW = int((p.title.size() + 40) * 8.5);
    width = std::max({width, w, titleW});
    height += h;
  }
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width + 20
      << "\" height=\"" << height << "\" font-family=\"monospace\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  int top = 10;
  for (size_t k = 0; k < panels.size(); ++k) {
    const Layout &l = panels[k].layout;
    const Extents &e = ext[k];
    auto tileOf = [&](int64_t i, int64_t j) {
      int64_t gridCols = ceilDiv(shape[1], l.tile()[1]);
      return (i / l.tile()[0]) * gridCols + j / l.tile()[1];
    };
    svg << "<text x=\"10\" y=\"" << top + 16 << "\" font-size=\"14\">"
        << escapeXml(panels[k].title) << " on " << shape[0] << "x" << shape[1]
        << ": image " << e.width << "x" << e.height << " texels</text>\n";
    int y0 = top + titleH - 10;
    // Logical matrix.
    for (int64_t i = 0; i < shape[0]; ++i)
      for (int64_t j = 0; j < shape[1]; ++j)
        svg << "<rect x=\"" << 10 + j * cell << "\" y=\"" << y0 + i * cell
            << "\" width=\"" << cell << "\" height=\"" << cell << "\" fill=\""
            << tileColour(tileOf(i, j))
            << "\" stroke=\"#888\" stroke-width=\"0.5\"/>\n"
            << "<text x=\"" << 10 + j * cell + 3 << "\" y=\""
            << y0 + i * cell + 16 << "\" font-size=\"8\">" << i << "," << j
            << "</text>\n";
    // Image: texels split into 4 channel strips.
    int x0 = 10 + int(shape[1]) * cell + gap;
    for (int64_t ty = 0; ty < e.height; ++ty)
      for (int64_t tx = 0; tx < e.width; ++tx) {
        for (unsigned ch = 0; ch < 4; ++ch) {
          auto idx = l.toLogical(shape, TexelCoord{0, ty, tx, ch});
          int cx = x0 + int(tx) * texel,
              cy = y0 + int(ty) * texel + ch * texel / 4;
          svg << "<rect x=\"" << cx << "\" y=\"" << cy << "\" width=\"" << texel
              << "\" height=\"" << texel / 4 << "\" fill=\""
              << (idx ? tileColour(tileOf((*idx)[0], (*idx)[1])) : "#eee")
              << "\" stroke=\"#bbb\" stroke-width=\"0.5\"/>\n";
          svg << "<text x=\"" << cx + 4 << "\" y=\"" << cy + 10
              << "\" font-size=\"8\">"
              << "RGBA"[ch] << " "
              << (idx ? std::to_string((*idx)[0]) + "," +
                            std::to_string((*idx)[1])
                      : std::string("pad"))
              << "</text>\n";
        }
        svg << "<rect x=\"" << x0 + tx * texel << "\" y=\"" << y0 + ty * texel
            << "\" width=\"" << texel << "\" height=\"" << texel
            << "\" fill=\"none\" stroke=\"black\" stroke-width=\"1.5\"/>\n";
      }
    top += titleH + std::max(int(shape[0]) * cell, int(e.height) * texel) + 30;
  }
  svg << "</svg>\n";
  std::cout << svg.str();
  return 0;
}
