//! Values crossing the seam: one statement's parameters ([`Value`]) and a batch of rows
//! to insert, column by column ([`Batch`]). Each kind is the Rust type both client
//! libraries bind to the column's SQL type (BIGINT or INTEGER, DOUBLE PRECISION or REAL,
//! TEXT, BYTEA or BLOB), so what is stored is what the backends stored when each bound
//! its own values.

/// One parameter of a statement; every kind may be NULL but a blob.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Value<'a> {
    Int(Option<i64>),
    /// NaN goes in as it is: SQLite stores a bound NaN as NULL, PostgreSQL as NaN.
    Real(Option<f64>),
    Text(Option<&'a str>),
    Blob(&'a [u8]),
}

impl From<i64> for Value<'_> {
    fn from(v: i64) -> Self {
        Value::Int(Some(v))
    }
}

impl From<u32> for Value<'_> {
    fn from(v: u32) -> Self {
        Value::Int(Some(i64::from(v)))
    }
}

impl From<f64> for Value<'_> {
    fn from(v: f64) -> Self {
        Value::Real(Some(v))
    }
}

impl<'a> From<&'a str> for Value<'a> {
    fn from(v: &'a str) -> Self {
        Value::Text(Some(v))
    }
}

impl<'a> From<Option<&'a str>> for Value<'a> {
    fn from(v: Option<&'a str>) -> Self {
        Value::Text(v)
    }
}

/// One column of a [`Batch`]: a value per row, all of one kind.
#[derive(Debug)]
pub(crate) enum Column<'a> {
    Int(Vec<i64>),
    OptInt(Vec<Option<i64>>),
    Real(Vec<f64>),
    OptReal(Vec<Option<f64>>),
    Str(Vec<&'a str>),
    Text(Vec<String>),
    OptText(Vec<Option<String>>),
    Blob(Vec<&'a [u8]>),
}

impl Column<'_> {
    /// Row `i`'s value.
    pub(crate) fn value(&self, i: usize) -> Value<'_> {
        match self {
            Column::Int(v) => Value::Int(Some(v[i])),
            Column::OptInt(v) => Value::Int(v[i]),
            Column::Real(v) => Value::Real(Some(v[i])),
            Column::OptReal(v) => Value::Real(v[i]),
            Column::Str(v) => Value::Text(Some(v[i])),
            Column::Text(v) => Value::Text(Some(&v[i])),
            Column::OptText(v) => Value::Text(v[i].as_deref()),
            Column::Blob(v) => Value::Blob(v[i]),
        }
    }
}

/// A Rust type a [`Column`] holds a vector of.
pub(crate) trait Cell<'a>: Sized {
    fn column(values: Vec<Self>) -> Column<'a>;
}

macro_rules! cells {
    ($($t:ty => $variant:ident),* $(,)?) => {
        $(impl<'a> Cell<'a> for $t {
            fn column(values: Vec<Self>) -> Column<'a> {
                Column::$variant(values)
            }
        })*
    };
}

cells!(
    i64 => Int,
    Option<i64> => OptInt,
    f64 => Real,
    Option<f64> => OptReal,
    &'a str => Str,
    String => Text,
    Option<String> => OptText,
    &'a [u8] => Blob,
);

/// Rows for one table: some columns with one value for every row (the run, the
/// measurement they belong to), then the columns that vary, each a value per row.
#[derive(Debug)]
pub(crate) struct Batch<'a> {
    pub(crate) table: &'static str,
    pub(crate) shared: Vec<(&'static str, Value<'a>)>,
    pub(crate) columns: Vec<(&'static str, Column<'a>)>,
    pub(crate) rows: usize,
}

impl<'a> Batch<'a> {
    /// `rows` rows for `table`; their columns come next.
    pub(crate) fn new(table: &'static str, rows: usize) -> Self {
        Batch {
            table,
            shared: Vec::new(),
            columns: Vec::new(),
            rows,
        }
    }

    /// A column with `value` in every row.
    pub(crate) fn shared(mut self, name: &'static str, value: impl Into<Value<'a>>) -> Self {
        self.shared.push((name, value.into()));
        self
    }

    /// A column whose values, one per row, `values` yields.
    pub(crate) fn column<T: Cell<'a>>(
        mut self,
        name: &'static str,
        values: impl IntoIterator<Item = T>,
    ) -> Self {
        let values: Vec<T> = values.into_iter().collect();
        debug_assert_eq!(values.len(), self.rows, "column {name} of {}", self.table);
        self.columns.push((name, T::column(values)));
        self
    }

    /// The `idx` column of a measurement's child rows: each row's position in the
    /// vector it came from, so reading back in key order restores the order.
    pub(crate) fn index(self) -> Self {
        let n = self.rows as i64;
        self.column("idx", 0..n)
    }

    /// Every column's name, the shared ones first: the order values bind in.
    pub(crate) fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        let shared = self.shared.iter().map(|(n, _)| *n);
        shared.chain(self.columns.iter().map(|(n, _)| *n))
    }

    /// Whether there is no row to insert.
    pub(crate) fn is_empty(&self) -> bool {
        self.rows == 0
    }
}
