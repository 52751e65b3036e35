"""semledger.eventlog"""
