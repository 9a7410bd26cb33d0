internal import CLibXML2
import Foundation

/// Dates and times in XLSX cells: a number (days since the workbook's epoch, the fraction the time of
/// day) shown as a date or time by the cell's number format. ``XLSXExtractor`` writes them in ISO 8601
/// (`2010-10-23`, `13:45:00`, `2010-10-23 13:45:00`) instead of the serial number.
enum SpreadsheetDates {
    /// What a number format shows a number as.
    enum Kind: Equatable {
        case number, date, time, dateTime
    }

    /// The kind of each cell format (`cellXfs/xf`, which a cell's `s` indexes) of a styles part.
    static func cellFormats(styles root: xmlNodePtr) -> [Kind] {
        var custom: [Int: String] = [:]
        for format in root.child("numFmts")?.children ?? XMLChildren(first: nil)
        where format.isElement && format.localName == "numFmt" {
            if let id = format.attribute("numFmtId").flatMap(Int.init), let code = format.attribute("formatCode") {
                custom[id] = code
            }
        }
        return (root.child("cellXfs")?.children ?? XMLChildren(first: nil))
            .filter { $0.isElement && $0.localName == "xf" }
            .map { xf in
                let id = xf.attribute("numFmtId").flatMap(Int.init) ?? 0
                return custom[id].map(kind(code:)) ?? builtIn(id)
            }
    }

    /// The built-in formats (ECMA-376 §18.8.30): 14–17 dates, 18–21 and 45–47 times, 22 both; 27–36 and
    /// 50–58 the dates of East Asian locales.
    static func builtIn(_ id: Int) -> Kind {
        switch id {
        case 14...17, 27...36, 50...58: .date
        case 18...21, 45...47: .time
        case 22: .dateTime
        default: .number
        }
    }

    /// The kind of a custom format code: a date if it shows a year, month or day, a time if hours or
    /// seconds; quoted text, `[…]` (colours, locales, conditions), escaped characters and the
    /// "General" keyword are not parts of it. Minutes alone (`m`, as in `mm:ss`) count with the time.
    static func kind(code: String) -> Kind {
        var letters = ""
        var quoted = false
        var bracket = false
        var escaped = false
        for character in code.lowercased().replacingOccurrences(of: "general", with: "") {
            if escaped {
                escaped = false
                continue
            }
            switch character {
            case "\"": quoted.toggle()
            case "\\" where !quoted: escaped = true
            case "[" where !quoted: bracket = true
            case "]" where !quoted: bracket = false
            default: if !quoted && !bracket { letters.append(character) }
            }
        }
        // An elapsed time ([h]:mm) is a duration of hours; its brackets hid the h.
        let elapsed = code.lowercased().contains("[h") || code.lowercased().contains("[s")
        let hasDate = letters.contains("y") || letters.contains("d")
        let hasTime = letters.contains("h") || letters.contains("s") || elapsed
        switch (hasDate, hasTime) {
        case (true, true): return .dateTime
        case (true, false): return .date
        case (false, true): return .time
        case (false, false):
            return letters.contains("m") && !letters.contains("0") && !letters.contains("#") ? .date : .number
        }
    }

    /// A serial number as ISO 8601 text of its kind, or nil when it cannot be a date (negative, or past
    /// year 9999).
    static func text(serial: Double, kind: Kind, date1904: Bool) -> String? {
        guard serial >= 0, serial < 2_958_466, kind != .number else { return nil }
        var days = Int(serial.rounded(.down))
        var seconds = Int(((serial - Double(days)) * 86_400).rounded())
        if seconds == 86_400 {
            days += 1
            seconds = 0
        }
        let time = String(format: "%02d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60)
        if kind == .time { return time }
        let date: String
        if date1904 {
            date = civil(daysSince1970: days - 24_107)
        } else if days == 60 {
            date = "1900-02-29"  // the day Lotus 1-2-3 (and so Excel) counts, which never was
        } else if days == 0 {
            date = "1900-01-00"  // Excel's own name for the day before its epoch
        } else {
            // Day 1 is 1900-01-01; past the phantom 29 February every serial is one day ahead.
            date = civil(daysSince1970: days - (days > 60 ? 25_569 : 25_568))
        }
        return kind == .date ? date : date + " " + time
    }

    /// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
    static func civil(daysSince1970 days: Int) -> String {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return String(format: "%04d-%02d-%02d", year, month, day)
    }
}
