"""semledger.replay"""
