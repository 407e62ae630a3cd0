//! Text tables of the client tools (comfy-table), set up in one place: the style, plain text
//! whatever the terminal, and right-aligned number columns.

use comfy_table::{CellAlignment, Table, presets};

/// How a table's lines are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// `+--+` boxes with one rule under the header: logs and pipes.
    Ascii,
    /// The same with box-drawing characters: a live terminal screen.
    Utf8,
    /// Markdown's pipes: tables that end up in CI output and READMEs.
    Markdown,
}

/// An empty table in `style`. It never styles its text (no colours, no bold): the tables go to
/// logs and files as often as to terminals.
pub fn new(style: Style) -> Table {
    let mut table = Table::new();
    table.load_style(match style {
        Style::Ascii => presets::ASCII_FULL_CONDENSED,
        Style::Utf8 => presets::UTF8_FULL_CONDENSED,
        Style::Markdown => presets::ASCII_MARKDOWN,
    });
    table.force_no_tty();
    table
}

/// Right-aligns `columns` (numbers read best aligned on their last digit).
pub fn right_align(table: &mut Table, columns: impl IntoIterator<Item = usize>) {
    for c in columns {
        if let Some(col) = table.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn styles_and_alignment() {
        let mut t = new(Style::Markdown);
        t.set_header(vec!["engine", "points"]);
        t.add_row(vec!["mcts", "1.5"]);
        t.add_row(vec!["random", "10"]);
        right_align(&mut t, [1]);
        let text = t.to_string();
        assert!(text.contains("| mcts   |    1.5 |"), "{text}");
        let mut t = new(Style::Ascii);
        t.add_row(vec!["a"]);
        assert!(t.to_string().starts_with('+'), "{t}");
        let mut t = new(Style::Utf8);
        t.add_row(vec!["a"]);
        assert!(!t.to_string().contains('+'), "{t}");
    }
}
