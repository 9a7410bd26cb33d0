internal import CLibXML2

/// A picture's alternative text, written into a document's text as HTML's `alt` is: `[image: …]`, so that a
/// search finds a picture, chart or diagram by what its author said it shows. Office documents keep it on the
/// drawing, not in the text runs the readers take.
enum AltText {
    /// `[image: description]` with its white space collapsed; nil for a missing or blank description (a
    /// decorative picture has none).
    static func marker(_ description: String?) -> String? {
        guard let description else { return nil }
        let collapsed = StructuredTextBuilder.collapse(description)
        return collapsed.isEmpty ? nil : "[image: \(collapsed)]"
    }

    /// The marker of a DrawingML object from its non-visual properties (`wp:docPr` in Word, `p:cNvPr` in
    /// PowerPoint): the description (`descr`), else the title.
    static func drawingML(_ properties: xmlNodePtr?) -> String? {
        guard let properties else { return nil }
        return marker(properties.attribute("descr")) ?? marker(properties.attribute("title"))
    }

    /// The marker of an OpenDocument frame or shape (`draw:frame`, …) from its `svg:desc`, else its
    /// `svg:title`.
    static func openDocument(_ frame: xmlNodePtr) -> String? {
        marker(frame.child("desc").map { HTMLWalker.text(of: $0) })
            ?? marker(frame.child("title").map { HTMLWalker.text(of: $0) })
    }

    /// Whether an OpenDocument frame shows a picture or an embedded object (a chart, a formula), not a text box.
    static func holdsPicture(_ frame: xmlNodePtr) -> Bool {
        frame.child("image") != nil || frame.child("object") != nil || frame.child("object-ole") != nil
    }

    /// Appends `marker` to a paragraph's text, a space apart from what is before and after it.
    static func append(_ marker: String, to text: inout String) {
        if let last = text.last, !last.isWhitespace { text += " " }
        text += marker + " "
    }
}
