"""mcpl"""
