"""Outcome log, JUnit per spec section, coverage matrix, dashboard and baselines."""
