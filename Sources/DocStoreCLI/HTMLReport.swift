// HTMLReport: `docstore inspect FILE --html report.html` — one self-contained page (no scripts, no
// links, styles inline) for people who would rather look than read: the page map drawn as a
// grid of colored squares (one per page: its tree's color, darker for branch pages, striped for
// overflow pages, pale for free ones), each tree's depth, fan-out and fill, and each entity's
// size.
//
//   HR1 a file of more than `maxCells` pages draws one square per run of pages, colored by the
//       tree that owns most of them; the page types are then not shown.
//   HR2 every square has a tooltip (its page, owner and type), and every color a legend entry.
//   HR3 the report changes nothing: it reads through the read-only engine.

import DocStore
import DocStoreEngine
import Foundation

struct HTMLReport {
    let file: String
    let engine: Engine

    /// Squares the page map draws at most (HR1).
    static let maxCells = 20_000

    func render() throws -> String {
        let meta = engine.durableMeta
        let stats = engine.statistics()
        let pageCount = Int(stats.pageCount)
        let owners = try engine.pageMap()
        let summary = try StoreSummary.read(from: engine)
        let names = try engine.read { try $0.treeNames() }
        let shapes = try names.compactMap { try engine.treeShape($0) }
        let group = max(1, (pageCount + Self.maxCells - 1) / Self.maxCells)
        var types: [UInt64: String] = [:]
        if group == 1 {
            for p in 2..<max(2, pageCount) where owners[UInt64(p)] != nil && owners[UInt64(p)] != "free" {
                types[UInt64(p)] = (try? engine.inspectPage(PageNumber(UInt64(p))).type).flatMap { $0.map { "\($0)" } }
            }
        }
        let palette = Palette(trees: ["$catalog"] + names)
        var html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>DocStore report: \(escape(file))</title>
            <style>
            body { font: 14px/1.4 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px; color: #222; }
            h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
            .sub { color: #666; margin-bottom: 16px; }
            .cards { display: flex; flex-wrap: wrap; gap: 10px; }
            .card { border: 1px solid #ddd; border-radius: 6px; padding: 8px 12px; min-width: 120px; }
            .card b { display: block; font-size: 18px; }
            .map { display: grid; grid-template-columns: repeat(64, 12px); gap: 1px; }
            .p { width: 12px; height: 12px; border-radius: 2px; }
            .legend { display: flex; flex-wrap: wrap; gap: 6px 16px; margin-top: 10px; }
            .legend span.sw { display: inline-block; width: 12px; height: 12px; border-radius: 2px; vertical-align: -2px; margin-right: 4px; }
            table { border-collapse: collapse; } td, th { padding: 3px 10px; text-align: left; border-bottom: 1px solid #eee; }
            td.n { text-align: right; font-variant-numeric: tabular-nums; }
            .bar { background: #eee; width: 160px; height: 10px; border-radius: 3px; }
            .bar div { height: 10px; border-radius: 3px; }
            </style></head><body>
            <h1>\(escape((file as NSString).lastPathComponent))</h1>
            <div class="sub">\(escape(file)) · store \(meta.storeID.uuidString) · made by docstore inspect --html</div>
            <div class="cards">
            \(card("format", "\(meta.formatMajor).\(meta.formatMinor)"))
            \(card("page file", humanBytes(fileSize(engine.paths.pageFile))))
            \(card("pages", "\(pageCount) × \(meta.pageSize / 1024) KiB"))
            \(card("free", "\(stats.freePages) (\(pageCount > 0 ? stats.freePages * 100 / pageCount : 0) %)"))
            \(card("WAL", humanBytes(fileSize(engine.paths.wal))))
            \(card("checkpoint", "gen \(meta.generation.rawValue), lsn \(meta.checkpointLSN.rawValue)"))
            \(card("trees", "\(names.count)"))
            \(card("objects", summary.map { "\($0.entities.reduce(0) { $0 + $1.objects })" } ?? "none"))
            </div>
            <h2>Page map</h2>
            <div class="sub">\(group == 1 ? "One square per page" : "One square per \(group) pages (the tree owning most of them)"), 64 to a row; hover for the page, its owner and type. Darker: branch pages; striped: overflow pages.</div>
            <div class="map">

            """
        var cell = 0
        while cell * group < pageCount {
            let first = cell * group, last = min(pageCount, first + group) - 1
            let owner: String
            if group == 1 {
                owner = owners[UInt64(first)] ?? "unowned"
            } else {
                var counts: [String: Int] = [:]
                for p in first...last { counts[owners[UInt64(p)] ?? "unowned", default: 0] += 1 }
                owner = counts.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }?.key ?? "unowned"
            }
            let type = types[UInt64(first)]
            let what = summary?.trees[owner].map { " (\($0))" } ?? ""
            let title = (group == 1 ? "page \(first)" : "pages \(first)–\(last)") + " · \(owner)\(what)" + (type.map { " · \($0)" } ?? "")
            html += "<div class=\"p\" style=\"background:\(palette.fill(owner, type: type))\" title=\"\(escape(title))\"></div>"
            cell += 1
            if cell % 64 == 0 { html += "\n" }
        }
        html += "\n</div>\n<div class=\"legend\">"
        var pagesByOwner: [String: Int] = [:]
        for p in 0..<pageCount { pagesByOwner[owners[UInt64(p)] ?? "unowned", default: 0] += 1 }
        for owner in palette.order where pagesByOwner[owner] != nil {
            let what = summary?.trees[owner].map { " — \($0)" } ?? ""
            html += "<span><span class=\"sw\" style=\"background:\(palette.color(owner))\"></span>\(escape(owner))\(escape(what)): \(pagesByOwner[owner] ?? 0)</span>"
        }
        html += "</div>\n<h2>Trees</h2>\n<table><tr><th>tree</th><th>holds</th><th>entries</th><th>depth</th><th>pages</th><th>fan-out</th><th>leaf fill</th><th></th></tr>\n"
        for shape in shapes {
            let leaf = shape.levels.last
            let fill = leaf?.fill(pageSize: shape.pageSize) ?? 0
            let fanOut = shape.levels.dropLast().map(\.fanOut).max().map { String(format: "%.1f", $0) } ?? "–"
            html += "<tr><td><span class=\"sw\" style=\"display:inline-block;width:10px;height:10px;background:\(palette.color(shape.name))\"></span> \(escape(shape.name))</td>"
                + "<td>\(escape(summary?.trees[shape.name] ?? (shape.name.hasPrefix("$") ? "the engine's own" : "")))</td>"
                + "<td class=\"n\">\(shape.entries)</td><td class=\"n\">\(shape.depth)</td><td class=\"n\">\(shape.pages)</td><td class=\"n\">\(fanOut)</td>"
                + "<td class=\"n\">\(String(format: "%.0f", fill * 100)) %</td>"
                + "<td><div class=\"bar\"><div style=\"width:\(String(format: "%.0f", fill * 100))%;background:\(palette.color(shape.name))\"></div></div></td></tr>\n"
        }
        html += "</table>\n"
        if let summary {
            let most = max(1, summary.entities.map(\.objects).max() ?? 1)
            // Each entity's records tree (shared by an entity hierarchy), for its size on disk.
            var recordsTree: [String: TreeShape] = [:]
            for shape in shapes {
                guard let holds = summary.trees[shape.name], holds.hasPrefix("records of ") else { continue }
                for name in holds.dropFirst("records of ".count).components(separatedBy: ", ") { recordsTree[name] = shape }
            }
            html += "<h2>Entities</h2>\n<div class=\"sub\">Schema version \(summary.schemaVersion). Objects of each entity (its own, not its sub-entities'), and the pages and bytes of the records tree it is kept in (an entity hierarchy shares one).</div>\n"
            html += "<table><tr><th>entity</th><th>objects</th><th></th><th>records tree</th><th>pages</th><th>record bytes in pages</th></tr>\n"
            for (name, objects) in summary.entities {
                let tree = recordsTree[name]
                html += "<tr><td>\(escape(name))</td><td class=\"n\">\(objects)</td><td><div class=\"bar\" style=\"width:320px\"><div style=\"width:\(objects * 100 / most)%;background:\(palette.color(tree?.name ?? ""))\"></div></div></td>"
                    + "<td>\(escape(tree?.name ?? "–"))</td><td class=\"n\">\(tree?.pages ?? 0)</td><td class=\"n\">\(humanBytes(UInt64(tree?.inlineValueBytes ?? 0)))</td></tr>\n"
            }
            html += "</table>\n"
        }
        html += "</body></html>\n"
        return html
    }

    private func card(_ label: String, _ value: String) -> String {
        "<div class=\"card\">\(escape(label))<b>\(escape(value))</b></div>"
    }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// A color per owner (HR2): records trees in blues, links in greens, indexes in oranges, the
/// engine's and the catalog's own in purples and grays; free pages pale.
struct Palette {
    /// Every owner with a color, in legend order.
    let order: [String]
    private var colors: [String: String] = [:]

    init(trees: [String]) {
        var order = ["meta"]
        var counts: [String: Int] = [:]
        var colors: [String: String] = ["meta": "#333333", "free": "#dde3ea", "free list": "#b0b0b0", "unowned": "#e53935"]
        for tree in trees {
            let family: (hue: Int, name: String) = tree.hasPrefix("records.") ? (212, "records") : tree.hasPrefix("links.") ? (135, "links")
                : (tree.hasPrefix("index.") || tree.hasPrefix("unique.") || tree.hasPrefix("compound.")) ? (32, "index")
                : tree.hasPrefix("$") ? (280, "engine") : (320, "other")
            let i = counts[family.name, default: 0]
            counts[family.name] = i + 1
            // Hues step within the family; lightness alternates so neighbours differ.
            let hue = (family.hue + (i * 17) % 50 + 360) % 360
            let light = 38 + (i % 3) * 10
            colors[tree] = "hsl(\(hue), 65%, \(light)%)"
            order.append(tree)
        }
        self.order = order + ["free list", "free", "unowned"]
        self.colors = colors
    }

    func color(_ owner: String) -> String { colors[owner] ?? "#e53935" }

    /// A square's background: branch pages darker, overflow pages striped.
    func fill(_ owner: String, type: String?) -> String {
        let base = color(owner)
        switch type {
        case "branch": return "linear-gradient(rgba(0,0,0,.35), rgba(0,0,0,.35)), \(base)"
        case "overflow": return "repeating-linear-gradient(45deg, \(base) 0 3px, #ffffff 3px 5px)"
        default: return base
        }
    }
}
