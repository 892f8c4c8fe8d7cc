"""hwdescs"""
