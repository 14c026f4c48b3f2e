// The chat area: the header (title, model picker, settings), notices, the active path of the
// open conversation, and the composer. While a reply streams the list keeps to the bottom,
// unless the user has scrolled up.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

Pane {
    id: root
    objectName: "chatView"
    padding: 0

    signal openModelRequested()
    signal settingsRequested()
    signal detailsRequested(int row)

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        ChatHeader {
            Layout.fillWidth: true
            onOpenModelRequested: root.openModelRequested()
            onSettingsRequested: root.settingsRequested()
            onDetailsRequested: (row) => root.detailsRequested(row)
        }

        NoticeBar {
            Layout.fillWidth: true
        }

        Item {
            Layout.fillWidth: true
            Layout.fillHeight: true

            // Laid out bottom to top over the path reversed (row 0 is the newest message):
            // opening a long chat starts at its end and makes only the delegates that are seen.
            ListView {
                id: messages
                objectName: "messageList"
                anchors.fill: parent
                clip: true
                verticalLayoutDirection: ListView.BottomToTop
                model: ChatController.messagesNewestFirst
                spacing: 4
                topMargin: 12
                bottomMargin: 12
                ScrollBar.vertical: ScrollBar {
                    objectName: "messageScrollBar"
                }

                // The delegate of path row `row` (0: the first message), or null when not made.
                function delegateAtRow(row: int): Item {
                    return itemAtIndex(count - 1 - row)
                }

                // Follow the newest message while streaming, unless the user scrolled away.
                property bool followBottom: true
                property bool autoScrolling: false
                function scrollToEnd() {
                    autoScrolling = true
                    positionViewAtBeginning()
                    autoScrolling = false
                }
                onContentYChanged: if (!autoScrolling && (moving || dragging)) followBottom = atYEnd
                onMovementEnded: followBottom = atYEnd
                onContentHeightChanged: if (followBottom) settle.restart()
                onCountChanged: if (followBottom) settle.restart()

                // Scrolls once the delegates have their heights (after this frame's layout).
                Timer {
                    id: settle
                    interval: 0
                    onTriggered: messages.scrollToEnd()
                }

                Connections {
                    target: ChatController
                    function onConversationChanged() {
                        messages.followBottom = true
                    }
                }

                delegate: MessageDelegate {
                    width: ListView.view.width
                }
            }

            // Above the (empty) list, so its buttons get the clicks.
            EmptyState {
                anchors.centerIn: parent
                width: Math.min(parent.width - 40, 520)
                visible: messages.count === 0
            }

            Button {
                objectName: "jumpToBottom"
                anchors.horizontalCenter: parent.horizontalCenter
                anchors.bottom: parent.bottom
                anchors.bottomMargin: 8
                visible: !messages.followBottom && messages.count > 0
                text: qsTr("↓ Jump to the latest")
                Accessible.name: qsTr("Scroll to the latest message")
                onClicked: {
                    messages.followBottom = true
                    messages.scrollToEnd()
                }
            }
        }

        Composer {
            Layout.fillWidth: true
        }
    }
}
