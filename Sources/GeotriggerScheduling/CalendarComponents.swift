/// The date components a calendar trigger matches, as in `UNCalendarNotificationTrigger`.
///
/// Any subset may be given. Components coarser than the finest one given match anything;
/// components finer than it are zero (so `hour: 8` fires at 08:00:00 every day).
/// `weekday` is 1 = Sunday … 7 = Saturday, as Foundation's Gregorian calendar numbers them.
public struct CalendarComponents: Hashable, Sendable {
    public var year: Int?
    public var month: Int?
    public var day: Int?
    public var hour: Int?
    public var minute: Int?
    public var second: Int?
    public var weekday: Int?

    public init(year: Int? = nil, month: Int? = nil, day: Int? = nil, hour: Int? = nil,
                minute: Int? = nil, second: Int? = nil, weekday: Int? = nil) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
        self.weekday = weekday
    }
}
