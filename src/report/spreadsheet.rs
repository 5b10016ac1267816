//! What a spreadsheet makes of a JTL: LibreOffice Calc and Excel hold at most [`SHEET_ROWS`] rows a sheet
//! and, opening a longer CSV file, keep only that many, so a run or report says when its JTL does not fit.

use std::fmt;

/// Rows in a sheet of LibreOffice Calc and of Excel (2^20), the header row included.
pub const SHEET_ROWS: u64 = 1 << 20;

/// A JTL with more sample rows than fit under its header in one sheet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooManyRows {
    pub path: String,
    /// Its sample rows (records; a quoted field with line breaks is still one row).
    pub rows: u64,
}

impl TooManyRows {
    /// `Some` when `rows` sample rows and their header do not fit in one sheet.
    pub fn check(path: impl Into<String>, rows: u64) -> Option<Self> {
        (rows >= SHEET_ROWS).then(|| TooManyRows { path: path.into(), rows })
    }

    /// Sample rows a spreadsheet leaves out.
    pub fn cut(&self) -> u64 {
        self.rows + 1 - SHEET_ROWS
    }
}

impl fmt::Display for TooManyRows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} has {} sample rows: with the header, more than the {SHEET_ROWS} rows a LibreOffice or Excel sheet \
             holds, so a spreadsheet opening it leaves out the last {}; for a spreadsheet, write the per-label \
             table with --summary-csv FILE, or read the JTL with pandas (docs/results.md)",
            self.path,
            self.rows,
            self.cut()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_and_rows_up_to_the_last_row_of_a_sheet_fit() {
        assert_eq!(TooManyRows::check("r.jtl", 0), None);
        assert_eq!(TooManyRows::check("r.jtl", SHEET_ROWS - 1), None, "1048575 rows under the header fit");
        let over = TooManyRows::check("r.jtl", SHEET_ROWS).expect("1048576 rows do not");
        assert_eq!(over.cut(), 1);
        let text = over.to_string();
        assert!(text.starts_with("r.jtl has 1048576 sample rows"), "{text}");
        assert!(text.contains("leaves out the last 1;") && text.contains("--summary-csv FILE"), "{text}");
        assert_eq!(TooManyRows::check("r.jtl", 3_000_000).unwrap().cut(), 3_000_000 - 1_048_575);
    }
}
