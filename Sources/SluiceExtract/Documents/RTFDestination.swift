/// Where the text of an RTF group goes, as ``RTFReader`` reads it: the body, the parts it reads for
/// metadata or structure (the font table for code pages, the style sheet for headings, `\info`'s title
/// and author, a list item's number, footnotes), or nowhere.
enum RTFDestination: Equatable {
    case body
    /// Text dropped, with everything nested in it.
    case skipped
    case fontTable
    case styleSheet
    /// One `{…}` entry of the style sheet.
    case styleEntry
    case info
    case title
    case author
    /// The number or bullet a list paragraph shows (`{\listtext 1.\tab}`).
    case listText
    case footnote
    /// A field's result (`\fldrslt`): text where the field stands.
    case fieldResult

    /// Destinations whose content is not text of the document: tables of fonts, colours, lists and
    /// revisions, pictures and objects, headers and footers, field instructions, bookmarks, shapes,
    /// comments, index entries, theme and XML data, and the rest that word processors write.
    static let skippedWords: Set<String> = [
        "colortbl", "pict", "object", "objdata", "header", "headerl", "headerr", "headerf", "footer", "footerl",
        "footerr", "footerf", "fldinst", "themedata", "colorschememapping", "datastore", "latentstyles", "listtable",
        "listoverridetable", "rsidtbl", "generator", "xmlnstbl", "filetbl", "revtbl", "pgdsctbl", "nonshppict",
        "shppict", "shp", "shpinst", "bkmkstart", "bkmkend", "xe", "tc", "txe", "mmathPr", "userprops", "docvar",
        "pntext", "pntxta", "pntxtb", "ftnsep", "ftnsepc", "aftnsep", "aftnsepc", "template", "listpicture",
        "background", "formfield", "annotation", "atnid", "atnauthor", "atnref", "atndate", "atrfstart", "atrfend",
        "protusertbl", "wgrffmtfilter", "mhtmltag", "htmltag", "blipuid", "panose", "falt", "fontemb", "fontfile",
        "keywords", "subject", "doccomm", "operator", "company", "manager", "category", "comment", "hlinkbase",
        "passwordhash", "rxe", "pn",
    ]

    /// The destination a control word opens, or nil when it is not a destination.
    static func named(_ word: String) -> RTFDestination? {
        switch word {
        case "fonttbl": .fontTable
        case "stylesheet": .styleSheet
        case "info": .info
        case "title": .title
        case "author": .author
        case "listtext": .listText
        case "footnote": .footnote
        case "fldrslt": .fieldResult
        default: skippedWords.contains(word) ? .skipped : nil
        }
    }
}
