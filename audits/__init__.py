"""Membership-style privacy audits of release functions (built on :mod:`algorithms` and :mod:`accountant`)."""
