//! `perflab history`: the series the store holds, or the selected ones with their change
//! points and the events they make (`perflab_history`).

use perflab_history::series::select;
use perflab_history::view::HistoryView;
use perflab_history::{analyse, events, extract, Filter, HistoryConfig, HistoryError};
use perflab_report::Format;

use crate::cli::Global;
use crate::cli_history::{HistoryArgs, HistoryFormat};
use crate::cmd::{common, envelope};
use crate::exit::input;

pub fn run(g: &Global, a: HistoryArgs) -> anyhow::Result<i32> {
    let store = common::read_store(g)?;
    let all = extract(&store)?;
    let filter = Filter {
        name: a.series.clone(),
        study: a.study.clone(),
        point: a.point.clone(),
        variant: a.variant.clone(),
        metric: a.metric.clone(),
        host: a.host.clone(),
    };
    let view = if filter.is_empty() {
        HistoryView::listing(&all, &store.location().to_string())
    } else {
        let picked = select(all, &filter).map_err(|e| match e {
            HistoryError::NoMatch { .. } => input(e.to_string()),
            other => other.into(),
        })?;
        let mut cfg = HistoryConfig::default();
        cfg.detector.alpha = a.alpha;
        let histories: Vec<_> = picked.iter().map(|s| analyse(s, &cfg)).collect();
        HistoryView::histories(&histories, &events(&histories))
    };
    match a.format {
        HistoryFormat::Json => envelope::print(&view.json())?,
        HistoryFormat::Text => crate::stdout_guard::print(view.render(Format::Text))?,
        HistoryFormat::Markdown => crate::stdout_guard::print(view.render(Format::Markdown))?,
        HistoryFormat::Mail => crate::stdout_guard::print(view.render(Format::Mail))?,
        HistoryFormat::Html => crate::stdout_guard::print(view.render(Format::Html))?,
    }
    Ok(0)
}
