"""semledger.actors"""
