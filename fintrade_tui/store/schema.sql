-- fintrade-tui store schema. Dates are DATE; "available_from" is the first date a value may be used.
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);

CREATE TABLE IF NOT EXISTS companies (
    ticker VARCHAR PRIMARY KEY, name VARCHAR, cik BIGINT, sector VARCHAR, industry VARCHAR,
    country VARCHAR
);

-- Every SEC filer of the bundle's company_tickers.json, in SEC's order (rank 0 first).
CREATE TABLE IF NOT EXISTS sec_filers (ticker VARCHAR, cik BIGINT, title VARCHAR, rank INTEGER);

-- One row per membership interval; end_date is the first day out of the index (NULL = still in).
CREATE TABLE IF NOT EXISTS index_membership (
    ticker VARCHAR, start_date DATE, end_date DATE
);

-- Every price row of every source, as read.
CREATE TABLE IF NOT EXISTS price_rows (
    ticker VARCHAR, date DATE, source VARCHAR, open DOUBLE, high DOUBLE, low DOUBLE,
    close DOUBLE, adj_close DOUBLE, volume DOUBLE, file VARCHAR,
    PRIMARY KEY (ticker, source, date)
);

-- One series per ticker on the preferred source's basis. Rows another source adds beyond it are
-- rescaled at the junction: adj_close by `adj_factor`, OHLC by `close_factor` (volume divided).
CREATE TABLE IF NOT EXISTS prices (
    ticker VARCHAR, date DATE, open DOUBLE, high DOUBLE, low DOUBLE, close DOUBLE,
    adj_close DOUBLE, volume DOUBLE, source VARCHAR, adj_factor DOUBLE, close_factor DOUBLE,
    PRIMARY KEY (ticker, date)
);

CREATE TABLE IF NOT EXISTS quarantine (
    file VARCHAR, source VARCHAR, ticker VARCHAR, reason VARCHAR
);

CREATE TABLE IF NOT EXISTS filings (
    accession VARCHAR PRIMARY KEY, ticker VARCHAR, cik BIGINT, form VARCHAR, filed DATE,
    period_end DATE, fiscal_year INTEGER, fiscal_period VARCHAR, path VARCHAR
);

-- Each filing's Item sections as clean text (retrieval/filing_text.py), parsed once at ingest
-- so indexing reads text, not HTML. `ord` keeps the filing's order.
CREATE TABLE IF NOT EXISTS filing_sections (
    accession VARCHAR, ord INTEGER, section_key VARCHAR, title VARCHAR, text VARCHAR
);

CREATE TABLE IF NOT EXISTS facts (
    accession VARCHAR, ticker VARCHAR, concept VARCHAR, prefix VARCHAR, value DOUBLE,
    unit VARCHAR, start_date DATE, end_date DATE, instant DATE, dimensional BOOLEAN,
    segments VARCHAR, decimals VARCHAR
);

-- One row per (ticker, period, ratio, source). Provenance: accession + concepts (+ price_date).
CREATE TABLE IF NOT EXISTS fundamentals (
    ticker VARCHAR, fiscal_year INTEGER, fiscal_period VARCHAR, period_end DATE,
    ratio VARCHAR, value DOUBLE, source VARCHAR, available_from DATE, estimated BOOLEAN,
    accession VARCHAR, concepts VARCHAR, price_date DATE, note VARCHAR,
    -- data-quality checks its inputs failed (comma-separated); a row with flags and no value
    -- says why a ratio is not computed. contested: the other sources that disagreed.
    flags VARCHAR, contested VARCHAR, source_rank INTEGER
);

-- Quarterly inputs behind the filing-derived ratios (flows are the quarter's own).
CREATE TABLE IF NOT EXISTS quarter_inputs (
    ticker VARCHAR, accession VARCHAR, fiscal_year INTEGER, fiscal_period VARCHAR,
    period_end DATE, item VARCHAR, value DOUBLE, concepts VARCHAR, method VARCHAR
);

CREATE TABLE IF NOT EXISTS polygon_fundamentals (
    ticker VARCHAR, period VARCHAR, filing_date DATE, revenue DOUBLE, net_income DOUBLE,
    shares_outstanding DOUBLE, market_cap DOUBLE
);

-- The bundle's fundamentals-sec rows as read (source sec_pit): one fiscal quarter each, usable
-- from `available_date` (its filing's date). `line` is the row's line in `file`.
CREATE TABLE IF NOT EXISTS sec_pit_rows (
    ticker VARCHAR, period_end DATE, available_date DATE, net_income DOUBLE, operating_cf DOUBLE,
    total_assets DOUBLE, equity DOUBLE, capex DOUBLE, free_cash_flow DOUBLE, file VARCHAR,
    line INTEGER
);

-- The same input from two sources for the same company and quarter (fundamentals/reconcile.py).
CREATE TABLE IF NOT EXISTS reconciliation (
    ticker VARCHAR, period_end DATE, item VARCHAR, source_a VARCHAR, value_a DOUBLE,
    source_b VARCHAR, value_b DOUBLE, rel_diff DOUBLE, status VARCHAR
);

-- Snapshot precedence: filings first, then vendors by how often they agree with the filings.
CREATE TABLE IF NOT EXISTS source_rank (
    source VARCHAR PRIMARY KEY, rank INTEGER, compared INTEGER, agreed INTEGER, rate DOUBLE
);

-- Every data-quality finding on a vendor series (fundamentals/quality.py).
CREATE TABLE IF NOT EXISTS quality_findings (
    "check" VARCHAR, ticker VARCHAR, source VARCHAR, item VARCHAR, period_end DATE,
    available_date DATE, value DOUBLE, other_source VARCHAR, other_value DOUBLE, reason VARCHAR,
    file VARCHAR, line INTEGER
);
