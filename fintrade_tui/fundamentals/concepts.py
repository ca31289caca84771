"""Which XBRL concepts feed each fundamental input, and the canonical ratio names."""

from __future__ import annotations

# First concept present wins (company totals only). Flows are durations, stocks are instants.
FLOWS: dict[str, list[str]] = {
    "net_income": [
        "NetIncomeLoss",
        "ProfitLoss",
        "NetIncomeLossAvailableToCommonStockholdersBasic",
    ],
    "revenue": [
        "Revenues",
        "RevenueFromContractWithCustomerExcludingAssessedTax",
        "RevenueFromContractWithCustomerIncludingAssessedTax",
        "SalesRevenueNet",
    ],
    "operating_cash_flow": [
        "NetCashProvidedByUsedInOperatingActivities",
        "NetCashProvidedByUsedInOperatingActivitiesContinuingOperations",
    ],
    "dividends_paid": ["PaymentsOfDividends", "PaymentsOfDividendsCommonStock"],
}
STOCKS: dict[str, list[str]] = {
    "total_assets": ["Assets"],
    "shareholders_equity": [
        "StockholdersEquity",
        "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest",
    ],
}
# Total debt = long-term debt (current + non-current) + commercial paper + short-term borrowings,
# each where reported. Long-term debt is taken, in this order, from: current + non-current;
# the `LongTermDebt` total; current + the non-current amount including finance leases (Alphabet's
# 10-Qs report only that).
LONG_TERM_DEBT = [
    ["LongTermDebtCurrent?", "LongTermDebtNoncurrent"],
    ["LongTermDebt"],
    ["LongTermDebtCurrent?", "LongTermDebtAndCapitalLeaseObligations"],
]
SHORT_TERM_DEBT = ["CommercialPaper", "ShortTermBorrowings"]
SHARES = "EntityCommonStockSharesOutstanding"  # dei cover page; summed over share classes

RATIOS = {
    "roa": "Return on Assets = quarterly net income / period-end total assets",
    "roe": "Return on Equity = quarterly net income / period-end shareholders' equity",
    "earnings_price": "Earnings/Price = trailing-12-month net income / market cap at price_date",
    "book_price": "Book/Price = shareholders' equity / market cap at price_date",
    "sales_assets": "Sales/Assets = quarterly revenue / period-end total assets",
    "debt_assets": "Debt/Assets = total debt / total assets",
    "debt_equity": "Debt/Equity = total debt / shareholders' equity",
    "cashflow_assets": "Cash-flow/Assets = quarterly operating cash flow / total assets",
    "dividend_yield": "Dividend yield = trailing-12-month dividends paid / market cap",
    "forecast_earnings_price": "Forecast Earnings/Price (vendor source only)",
}

# The paper's precomputed columns -> canonical names.
PRECOMPUTED_COLUMNS = {
    "F_Return on Assets": "roa",
    "F_Return on Equity": "roe",
    "F_Earnings/Price": "earnings_price",
    "F_Book/Price": "book_price",
    "F_Sales/Assets": "sales_assets",
    "F_Debt/Assets": "debt_assets",
    "F_Debt/Equity": "debt_equity",
    "F_Cash Flow/Assets": "cashflow_assets",
    "F_Dividend Yield": "dividend_yield",
    "F_Forecast Earnings/Price": "forecast_earnings_price",
}
