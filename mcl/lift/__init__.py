"""lift"""
