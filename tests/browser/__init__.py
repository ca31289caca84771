"""Browser tests: the explorer served to headless Chromium (Debian's, driven by Playwright)."""
