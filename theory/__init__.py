"""Closed forms of the audited claims, in sympy (lambdified for numbers). Pure math: no torch."""
